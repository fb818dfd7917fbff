#include "report/number_format.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iterator>

namespace modelcost {

void append_exact_number(double value, std::string& out) {
  if (!std::isfinite(value)) return;
  if (value == std::floor(value) && std::fabs(value) < kMaxExactInteger)
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(value));
  else  // fmt prints the shortest digits that read back to the same double (like %.17g, never wrong).
    fmt::format_to(std::back_inserter(out), "{}", value);
}

std::string exact_number(double value) {
  std::string text;
  append_exact_number(value, text);
  return text;
}

Json json_number(double value) {
  if (!std::isfinite(value)) return nullptr;
  if (value == std::floor(value) && std::fabs(value) < kMaxExactInteger) {
    if (value >= 0) return static_cast<uint64_t>(value);
    return static_cast<int64_t>(value);
  }
  return value;  // nlohmann prints doubles with round-trip precision too
}

std::string three_digits(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return "0";
  if (magnitude >= 1e15 || magnitude < 1e-3) return fmt::format("{:.3g}", value);
  int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(magnitude))));
  std::string text = fmt::format("{:.{}f}", value, decimals);
  // 9.996 rounds to "10.00": drop the digit that rounding added.
  if (decimals > 0 && std::fabs(std::stod(text)) >= std::pow(10.0, 3 - decimals))
    text = fmt::format("{:.{}f}", value, decimals - 1);
  return text;
}

namespace {

std::string scaled(double value, const char* const* units, size_t unit_count, const char* space_unit) {
  double magnitude = std::fabs(value);
  size_t unit = 0;
  while (unit + 1 < unit_count && magnitude >= 999.5) {
    magnitude /= 1000;
    value /= 1000;
    ++unit;
  }
  const std::string number = unit == 0 && value == std::floor(value) ? fmt::format("{}", static_cast<int64_t>(value))
                                                                     : three_digits(value);
  return number + space_unit + units[unit];
}

}  // namespace

std::string human_count(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  if (std::fabs(value) >= 999.5e18) return fmt::format("{:.3g}", value);
  std::string text = scaled(value, kUnits, 7, " ");
  if (!text.empty() && text.back() == ' ') text.pop_back();  // no unit below 1000
  return text;
}

std::string human_bytes(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  if (std::fabs(value) >= 999.5e18) return fmt::format("{:.3g} B", value);
  return scaled(value, kUnits, 7, " ");
}

std::string human_share(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return fmt::format("{:.1f}%", fraction * 100);
}

std::string terminal_text(const CellValue& cell, ColumnKind kind) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return "-";
    case CellValue::Type::kText: return cell.text;
    case CellValue::Type::kFlag: return cell.flag ? "yes" : "no";
    case CellValue::Type::kNumber: break;
  }
  switch (kind) {
    case ColumnKind::kCount: return human_count(cell.number);
    case ColumnKind::kBytes: return human_bytes(cell.number);
    case ColumnKind::kShare: return human_share(cell.number);
    case ColumnKind::kRatio:
    case ColumnKind::kTime: return three_digits(cell.number);
    case ColumnKind::kInteger:
    case ColumnKind::kText:
    case ColumnKind::kFlag: return exact_number(cell.number);
  }
  return exact_number(cell.number);
}

std::string file_text(const CellValue& cell) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return "";
    case CellValue::Type::kText: return cell.text;
    case CellValue::Type::kFlag: return cell.flag ? "true" : "false";
    case CellValue::Type::kNumber: return exact_number(cell.number);
  }
  return "";
}

Json cell_json(const CellValue& cell) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return nullptr;
    case CellValue::Type::kText: return cell.text;
    case CellValue::Type::kFlag: return cell.flag;
    case CellValue::Type::kNumber: return json_number(cell.number);
  }
  return nullptr;
}

}  // namespace modelcost
