#include "report/aggregate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace modelcost {

double number_at(const ReportColumn& column, const NodeAnalysis& node, size_t row) {
  if (!column.value) return 0;
  const CellValue cell = column.value(node, row);
  return cell.type == CellValue::Type::kNumber && std::isfinite(cell.number) ? cell.number : 0;
}

std::vector<size_t> heaviest_nodes(const Report& report, size_t top) {
  const ReportColumn* rank = report.find_column(report.rank_by);
  const auto& nodes = report.analysis->nodes;
  std::vector<std::pair<double, size_t>> ranked;
  if (!rank) return {};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const double v = number_at(*rank, nodes[i], i);
    if (v > 0) ranked.emplace_back(v, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> rows;
  for (size_t i = 0; i < ranked.size() && i < top; ++i) rows.push_back(ranked[i].second);
  return rows;
}

OpTypeSummary summarize_by_op_type(const Report& report) {
  OpTypeSummary summary;
  for (const auto& column : report.columns)
    if (column.additive && column.value) summary.columns.push_back(&column);
  summary.share_name = "share_of_" + report.rank_by;
  size_t rank_index = summary.columns.size();
  for (size_t c = 0; c < summary.columns.size(); ++c)
    if (summary.columns[c]->name == report.rank_by) rank_index = c;

  std::map<std::pair<std::string, std::string>, OpTypeRow> by_key;
  const auto& nodes = report.analysis->nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i].node;
    OpTypeRow& row = by_key[{node.domain, node.op_type}];
    if (row.count++ == 0) {
      row.domain = node.domain;
      row.op_type = node.op_type;
      row.sums.assign(summary.columns.size(), 0.0);
    }
    for (size_t c = 0; c < summary.columns.size(); ++c) row.sums[c] += number_at(*summary.columns[c], nodes[i], i);
  }
  double rank_total = 0;
  for (auto& [key, row] : by_key) {
    if (rank_index < summary.columns.size()) rank_total += row.sums[rank_index];
    summary.rows.push_back(std::move(row));
  }
  for (auto& row : summary.rows)
    row.share = rank_index < summary.columns.size() && rank_total > 0 ? row.sums[rank_index] / rank_total
                                                                      : std::numeric_limits<double>::quiet_NaN();
  std::stable_sort(summary.rows.begin(), summary.rows.end(), [&](const OpTypeRow& a, const OpTypeRow& b) {
    if (rank_index < summary.columns.size() && a.sums[rank_index] != b.sums[rank_index])
      return a.sums[rank_index] > b.sums[rank_index];
    return a.count > b.count;  // then the most frequent; the map already ordered names
  });
  return summary;
}

}  // namespace modelcost
