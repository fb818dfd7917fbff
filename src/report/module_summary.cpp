#include "report/module_summary.h"

#include <cmath>
#include <limits>
#include <map>

#include "report/aggregate.h"
#include "report/number_format.h"
#include "report/text_table.h"
#include "report/torch_scope.h"

namespace modelcost {

std::string node_scope(const Node& node) {
  if (std::optional<std::string> torch = torch_module_scope(node)) return *torch;
  const size_t slash = node.name.rfind('/');
  if (slash == std::string::npos || slash == 0) return "";
  return node.name.substr(0, slash);
}

std::string scope_at_depth(const std::string& scope, size_t depth) {
  std::string out;
  size_t taken = 0, start = 0;
  while (taken < depth && start < scope.size()) {
    size_t end = scope.find('/', start);
    if (end == std::string::npos) end = scope.size();
    if (end > start) {
      out += "/" + scope.substr(start, end - start);
      ++taken;
    }
    start = end + 1;
  }
  return out;
}

ModuleSummary summarize_by_module(const Report& report, size_t depth) {
  ModuleSummary summary;
  static_cast<SummedColumns&>(summary) = summed_columns(report);
  summary.depth = depth;
  std::map<std::string, size_t> index;
  const auto& nodes = report.analysis->nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string module = scope_at_depth(node_scope(*nodes[i].node), depth);
    auto [it, added] = index.emplace(module, summary.rows.size());
    if (added) {
      summary.rows.emplace_back();
      summary.rows.back().module = module;
    }
    add_to_row(summary, nodes[i], i, summary.rows[it->second]);
  }
  set_shares(summary, summary.rows);
  return summary;
}

namespace {

std::string module_label(const std::string& module) { return module.empty() ? "(no scope)" : module; }

void print_modules(const Report& report, size_t depth, std::ostream& out) {
  const ModuleSummary summary = summarize_by_module(report, depth);
  out << "\nBy module (depth " << depth << ", " << summary.rows.size() << " modules)\n";
  TextTable table;
  table.add_column("module", TextTable::Align::kLeft, 48);
  table.add_column("nodes", TextTable::Align::kRight);
  const SummedCells summed(report, summary, table);
  for (const auto& row : summary.rows) {
    std::vector<std::string> cells{module_label(row.module), std::to_string(row.count)};
    summed.append(row, cells);
    table.add_row(std::move(cells));
  }
  table.print(out);
}

Json modules_json(const Report& report, size_t depth) {
  const ModuleSummary summary = summarize_by_module(report, depth);
  Json rows = Json::array();
  for (const auto& row : summary.rows)
    rows.push_back(summed_json(summary, row, {{"module", row.module}, {"depth", depth}}));
  return rows;
}

}  // namespace

void add_module_summary(Report& report, size_t depth) {
  ReportColumn module;
  module.name = "module";
  module.title = "module";
  module.unit = "text";
  module.kind = ColumnKind::kText;
  module.sinks = kSinkFiles;
  module.value = [depth](const NodeAnalysis& n, size_t) { return CellValue::of_text(scope_at_depth(node_scope(*n.node), depth)); };
  report.add_column_after("domain", std::move(module));
  // The section reads the report when printed, so columns added later (measured times) are summed too.
  const Report* whole = &report;
  report.sections.push_back({"by_module", [whole, depth] { return modules_json(*whole, depth); },
                             [whole, depth](std::ostream& out) { print_modules(*whole, depth, out); }});
}

}  // namespace modelcost
