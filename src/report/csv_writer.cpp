#include "report/csv_writer.h"

#include "report/number_format.h"

namespace modelcost {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

void write_csv(const Report& report, std::ostream& out) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if ((c.sinks & kSinkCsv) && c.value) columns.push_back(&c);
  for (size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << csv_field(columns[c]->name);
  out << "\r\n";
  const auto& nodes = report.analysis->nodes;
  for (size_t row = 0; row < nodes.size(); ++row) {
    for (size_t c = 0; c < columns.size(); ++c)
      out << (c ? "," : "") << csv_field(file_text(columns[c]->value(nodes[row], row)));
    out << "\r\n";
  }
}

}  // namespace modelcost
