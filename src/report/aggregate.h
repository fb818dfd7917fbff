// Views over the per-node figures that more than one printer shows: the heaviest nodes and the
// summaries over sets of nodes (op type, module). Both order by the report's rank column (flops by default).
#pragma once
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "report/report.h"

namespace modelcost {

// Indices into Analysis::nodes of the `top` nodes with the largest rank value, heaviest first;
// ties keep topological order. Nodes whose rank value is 0 are left out.
std::vector<size_t> heaviest_nodes(const Report& report, size_t top);

class TextTable;

// A row of a summary over sets of nodes (one op type, one module).
struct SummedRow {
  size_t count = 0;          // nodes in the row
  std::vector<double> sums;  // one per SummedColumns::columns
  double share = 0;          // of the rank column's total; NaN when that total is 0
};

// The columns a summary adds up per row, and which of them its share is of.
struct SummedColumns {
  std::vector<const ReportColumn*> columns;  // the report's additive columns, in report order
  std::string share_name;                    // "share_of_flops"
  size_t rank_index = 0;                     // the rank column in `columns`; columns.size(): none
  bool ranks() const { return rank_index < columns.size(); }
};

SummedColumns summed_columns(const Report& report);
// Counts node `i` into `row` and adds its values.
void add_to_row(const SummedColumns& summed, const NodeAnalysis& node, size_t i, SummedRow& row);
// Each row's share of the rank column's total over all rows.
template <class Row>
void set_shares(const SummedColumns& summed, std::vector<Row>& rows) {
  double total = 0;
  for (const SummedRow& row : rows) total += summed.ranks() ? row.sums[summed.rank_index] : 0;
  for (SummedRow& row : rows)
    row.share = summed.ranks() && total > 0 ? row.sums[summed.rank_index] / total : std::nan("");
}

// The summed columns of a terminal table, after the row's own: the constructor adds their
// headings (those the table shows, then "% <rank>"), append() a row's cells.
class SummedCells {
 public:
  SummedCells(const Report& report, const SummedColumns& summed, TextTable& table);
  void append(const SummedRow& row, std::vector<std::string>& cells) const;

 private:
  const SummedColumns& summed_;
  std::vector<size_t> shown_;
};

// `entry` (the row's own fields) with its count, the JSON columns' sums and its share.
Json summed_json(const SummedColumns& summed, const SummedRow& row, Json entry);

struct OpTypeRow : SummedRow {
  std::string domain;
  std::string op_type;
};

struct OpTypeSummary : SummedColumns {
  std::vector<OpTypeRow> rows;  // heaviest first, then by name
};

OpTypeSummary summarize_by_op_type(const Report& report);

// A node's value in a numeric column (0 when the cell is not a number).
double number_at(const ReportColumn& column, const NodeAnalysis& node, size_t row);

}  // namespace modelcost
