// Views over the per-node figures that more than one printer shows: the heaviest nodes and the
// per-op-type summary. Both order by the report's rank column (flops by default).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "report/report.h"

namespace modelcost {

// Indices into Analysis::nodes of the `top` nodes with the largest rank value, heaviest first;
// ties keep topological order. Nodes whose rank value is 0 are left out.
std::vector<size_t> heaviest_nodes(const Report& report, size_t top);

struct OpTypeRow {
  std::string domain;
  std::string op_type;
  size_t count = 0;
  std::vector<double> sums;  // one per OpTypeSummary::columns
  double share = 0;          // of the rank column's total; NaN when that total is 0
};

struct OpTypeSummary {
  std::vector<const ReportColumn*> columns;  // the report's additive columns, in report order
  std::vector<OpTypeRow> rows;               // heaviest first, then by name
  std::string share_name;                    // "share_of_flops"
};

OpTypeSummary summarize_by_op_type(const Report& report);

// A node's value in a numeric column (0 when the cell is not a number).
double number_at(const ReportColumn& column, const NodeAnalysis& node, size_t row);

}  // namespace modelcost
