// `modelcost diff A B`: two reports side by side. Nodes are matched by name, then the rest by
// structure (same op type and output shapes, in graph order); each figure gets A, B and B - A per
// node, per op type and in total, and nodes whose roofline bound changed are listed.
#pragma once
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/diff_summary.h"
#include "report/report.h"

namespace modelcost {

// One figure compared: the column of both reports and the total.
struct DiffFigure {
  std::string name;  // "flops", "predicted_us", "measured_us", ...
  ColumnKind kind = ColumnKind::kCount;
};

struct NodeDiff {
  std::optional<size_t> a, b;  // row in each report; one is absent for a removed or added node
  std::string match;           // "name", "structure", "removed", "added"
  std::string op_type;
  std::vector<double> values_a, values_b;  // per DiffFigure (0 where the node is absent)
  std::string bound_a, bound_b;            // "" without a roofline
};

struct OpTypeDiff {
  std::string op_type;  // "com.microsoft.Attention" outside the standard domain
  size_t count_a = 0, count_b = 0;
  std::vector<double> sums_a, sums_b;
};

struct ModelDiff {
  const Report* a = nullptr;
  const Report* b = nullptr;
  std::vector<DiffFigure> figures;
  std::vector<NodeDiff> nodes;  // A's nodes in order (matched or removed), then B's added nodes
  std::vector<OpTypeDiff> op_types;  // by the largest |delta| of the first figure ranked, then name
  std::vector<double> totals_a, totals_b;
  // Latency in each view on every device, and the plan per batch (diff_summary.h).
  std::vector<WholeModelFigure> whole_model;
  size_t matched_by_name = 0, matched_by_structure = 0, removed = 0, added = 0, bound_changes = 0;
};

// Figures compared: MACs, FLOPs, params, bytes read/written, and predicted_us / measured_us when
// both reports have them.
ModelDiff diff_reports(const Report& a, const Report& b);

void print_diff(const ModelDiff& diff, size_t top, std::ostream& out);
void write_diff_csv(const ModelDiff& diff, std::ostream& out);
void write_diff_json(const ModelDiff& diff, std::ostream& out);

}  // namespace modelcost
