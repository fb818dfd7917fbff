#include "report/csv_writer.h"

#include "report/number_format.h"

namespace modelcost {
namespace {

bool needs_quotes(const std::string& text) { return text.find_first_of(",\"\r\n") != std::string::npos; }

void append_field(const std::string& text, std::string& out) {
  if (!needs_quotes(text)) {
    out += text;
    return;
  }
  out += '"';
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

// file_text() appended in place: numbers never need quoting.
void append_cell(const CellValue& cell, std::string& out) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return;
    case CellValue::Type::kText: return append_field(cell.text, out);
    case CellValue::Type::kFlag: out += cell.flag ? "true" : "false"; return;
    case CellValue::Type::kNumber: return append_exact_number(cell.number, out);
  }
}

}  // namespace

std::string csv_field(const std::string& text) {
  std::string quoted;
  append_field(text, quoted);
  return quoted;
}

std::string csv_report_text(const Report& report) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if ((c.sinks & kSinkCsv) && c.value) columns.push_back(&c);
  std::string out;
  const auto& nodes = report.analysis->nodes;
  out.reserve(nodes.size() * 160 + 1024);
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    append_field(columns[c]->name, out);
  }
  out += "\r\n";
  for (size_t row = 0; row < nodes.size(); ++row) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ',';
      append_cell(columns[c]->value(nodes[row], row), out);
    }
    out += "\r\n";
  }
  return out;
}

void write_csv(const Report& report, std::ostream& out) {
  const std::string text = csv_report_text(report);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace modelcost
