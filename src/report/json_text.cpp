#include "report/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "report/number_format.h"

namespace modelcost {
namespace {

// Printable ASCII without a quote or backslash needs no escaping; anything else goes through
// nlohmann's own escaping (control characters, UTF-8 checks) so the bytes match its dump().
bool plain_ascii(std::string_view text) {
  for (unsigned char ch : text)
    if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\') return false;
  return true;
}

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

}  // namespace

std::string compact_json(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

void JsonText::string(std::string_view text) {
  if (!plain_ascii(text)) {
    out_.append(compact_json(Json(std::string(text))));
    return;
  }
  out_.push_back('"');
  out_.append(text);
  out_.push_back('"');
}

void JsonText::number(double value) {
  if (!std::isfinite(value)) return null();
  if (value == std::floor(value) && std::fabs(value) < kMaxExactInteger) {
    if (value >= 0) return append_integer(out_, static_cast<uint64_t>(value));
    return append_integer(out_, static_cast<int64_t>(value));
  }
  // The double printer nlohmann's dump() uses (Grisu2, round-trip exact), for identical text.
  char buffer[64];
  const char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, value);
  out_.append(buffer, static_cast<size_t>(end - buffer));
}

void JsonText::integer(int64_t value) { append_integer(out_, value); }

void JsonText::cell(const CellValue& cell) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return null();
    case CellValue::Type::kText: return string(cell.text);
    case CellValue::Type::kFlag: return flag(cell.flag);
    case CellValue::Type::kNumber: return number(cell.number);
  }
}

void JsonText::value(const Json& value) { out_.append(compact_json(value)); }

}  // namespace modelcost
