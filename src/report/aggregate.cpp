#include "report/aggregate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "report/number_format.h"
#include "report/text_table.h"

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

SummedColumns summed_columns(const Report& report) {
  SummedColumns summed;
  for (const auto& column : report.columns)
    if (column.additive && column.value) summed.columns.push_back(&column);
  summed.share_name = "share_of_" + report.rank_by;
  summed.rank_index = summed.columns.size();
  for (size_t c = 0; c < summed.columns.size(); ++c)
    if (summed.columns[c]->name == report.rank_by) summed.rank_index = c;
  return summed;
}

void add_to_row(const SummedColumns& summed, const NodeAnalysis& node, size_t i, SummedRow& row) {
  if (row.count++ == 0) row.sums.assign(summed.columns.size(), 0.0);
  for (size_t c = 0; c < summed.columns.size(); ++c) row.sums[c] += number_at(*summed.columns[c], node, i);
}

SummedCells::SummedCells(const Report& report, const SummedColumns& summed, TextTable& table) : summed_(summed) {
  for (size_t c = 0; c < summed.columns.size(); ++c) {
    if (!(summed.columns[c]->sinks & kSinkTable)) continue;
    shown_.push_back(c);
    table.add_column(summed.columns[c]->title, TextTable::Align::kRight);
  }
  const ReportColumn* rank = report.find_column(report.rank_by);
  table.add_column("% " + (rank ? rank->title : report.rank_by), TextTable::Align::kRight);
}

void SummedCells::append(const SummedRow& row, std::vector<std::string>& cells) const {
  for (size_t c : shown_) cells.push_back(terminal_text(CellValue::of_number(row.sums[c]), summed_.columns[c]->kind));
  cells.push_back(human_share(row.share));
}

Json summed_json(const SummedColumns& summed, const SummedRow& row, Json entry) {
  entry["count"] = row.count;
  for (size_t c = 0; c < summed.columns.size(); ++c)
    if (summed.columns[c]->sinks & kSinkJson) entry[summed.columns[c]->name] = json_number(row.sums[c]);
  entry[summed.share_name] = json_number(row.share);
  return entry;
}

OpTypeSummary summarize_by_op_type(const Report& report) {
  OpTypeSummary summary;
  static_cast<SummedColumns&>(summary) = summed_columns(report);
  std::map<std::pair<std::string, std::string>, OpTypeRow> by_key;
  const auto& nodes = report.analysis->nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i].node;
    OpTypeRow& row = by_key[{node.domain, node.op_type}];
    row.domain = node.domain;
    row.op_type = node.op_type;
    add_to_row(summary, nodes[i], i, row);
  }
  for (auto& [key, row] : by_key) summary.rows.push_back(std::move(row));
  set_shares(summary, summary.rows);
  const size_t rank = summary.rank_index;
  std::stable_sort(summary.rows.begin(), summary.rows.end(), [&](const OpTypeRow& a, const OpTypeRow& b) {
    if (summary.ranks() && a.sums[rank] != b.sums[rank]) return a.sums[rank] > b.sums[rank];
    return a.count > b.count;  // then the most frequent; the map already ordered names
  });
  return summary;
}

}  // namespace modelcost
