#include "report/table_printer.h"

#include <fmt/format.h>

#include "report/aggregate.h"
#include "report/model_info.h"
#include "report/number_format.h"
#include "report/text_table.h"

namespace modelcost {
namespace {

constexpr size_t kNameWidth = 44;
constexpr size_t kShapeWidth = 28;

bool is_numeric(ColumnKind kind) { return kind != ColumnKind::kText && kind != ColumnKind::kFlag; }

void print_header(const Report& report, std::ostream& out) {
  const Model& model = report.model();
  out << "modelcost " << report.tool_version << ": " << model.path << "\n";
  out << "  producer  " << (model.producer.empty() ? "(none)" : model.producer) << ", IR version " << model.ir_version
      << "\n";
  std::string opsets;
  for (const auto& [domain, version] : sorted_opsets(model))
    opsets += (opsets.empty() ? "" : ", ") + domain + " " + std::to_string(version);
  out << "  opsets    " << opsets << "\n";
  TextTable inputs;
  inputs.add_column("input", TextTable::Align::kLeft);
  inputs.add_column("dtype", TextTable::Align::kLeft);
  inputs.add_column("declared", TextTable::Align::kLeft);
  inputs.add_column("analysed as", TextTable::Align::kLeft);
  for (const auto& input : summarize_inputs(*report.analysis)) {
    std::string declared;
    for (size_t i = 0; i < input.declared.size(); ++i) declared += (i ? "," : "") + input.declared[i];
    inputs.add_row({input.name, input.dtype.empty() ? "?" : input.dtype, "[" + declared + "]",
                    input.has_shape ? shape_dims_text(input.shape) : "?"});
  }
  if (inputs.rows()) {
    out << "\n";
    inputs.print(out);
  }
}

void print_totals(const Report& report, std::ostream& out) {
  out << "\nTotals\n";
  size_t width = 0;
  for (const auto& t : report.totals)
    if ((t.sinks & kSinkTable) && t.value) width = std::max(width, t.title.size());
  for (const auto& t : report.totals) {
    if (!(t.sinks & kSinkTable) || !t.value) continue;
    out << "  " << fmt::format("{:<{}}", t.title, width) << "  "
        << terminal_text(t.value(*report.analysis), t.kind) << "\n";
  }
}

void print_heaviest(const Report& report, size_t top, std::ostream& out) {
  if (top == 0) return;
  const auto& nodes = report.analysis->nodes;
  const auto rows = heaviest_nodes(report, top);
  const ReportColumn* rank = report.find_column(report.rank_by);
  const std::string rank_title = rank ? rank->title : report.rank_by;
  if (rows.empty()) {
    out << "\nHeaviest nodes: no node has " << rank_title << " > 0\n";
    return;
  }
  out << "\nHeaviest " << rows.size() << " of " << nodes.size() << " nodes by " << rank_title << "\n";
  std::vector<const ReportColumn*> columns;
  TextTable table;
  for (const auto& c : report.columns) {
    if (!(c.sinks & kSinkTable) || !c.value) continue;
    columns.push_back(&c);
    const size_t max_width = c.name == "name" ? kNameWidth : c.name == "output_shapes" ? kShapeWidth : 0;
    table.add_column(c.title, is_numeric(c.kind) ? TextTable::Align::kRight : TextTable::Align::kLeft, max_width);
  }
  for (size_t row : rows) {
    std::vector<std::string> cells;
    for (const auto* c : columns) cells.push_back(terminal_text(c->value(nodes[row], row), c->kind));
    table.add_row(std::move(cells));
  }
  table.print(out);
}

void print_by_op_type(const Report& report, const TableOptions& options, std::ostream& out) {
  const OpTypeSummary summary = summarize_by_op_type(report);
  if (summary.rows.empty()) return;
  const size_t shown = options.all_op_types ? summary.rows.size() : std::min(summary.rows.size(), options.top);
  if (shown == 0) return;
  out << "\nBy op type (" << summary.rows.size() << " types)\n";
  TextTable table;
  table.add_column("op", TextTable::Align::kLeft);
  table.add_column("count", TextTable::Align::kRight);
  const SummedCells summed(report, summary, table);
  for (size_t r = 0; r < shown; ++r) {
    const OpTypeRow& row = summary.rows[r];
    std::vector<std::string> cells{row.domain.empty() ? row.op_type : row.domain + "." + row.op_type,
                                   std::to_string(row.count)};
    summed.append(row, cells);
    table.add_row(std::move(cells));
  }
  table.print(out);
  if (shown < summary.rows.size())
    out << "  ... " << summary.rows.size() - shown << " more op types (--by-op lists them all)\n";
}

void print_warnings(const Report& report, std::ostream& out) {
  const auto& warnings = report.analysis->warnings;
  if (warnings.empty()) return;
  out << "\nWarnings (" << warnings.size() << ")\n";
  for (const auto& w : warnings) out << "  - " << w << "\n";
}

}  // namespace

void print_table(const Report& report, const TableOptions& options, std::ostream& out) {
  print_header(report, out);
  print_totals(report, out);
  for (const auto& section : report.sections)
    if (section.print) section.print(out);
  print_heaviest(report, options.top, out);
  print_by_op_type(report, options, out);
  print_warnings(report, out);
}

}  // namespace modelcost
