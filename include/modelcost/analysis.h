// What the cost stage produces and every later stage (roofline, measurement, reports) reads.
#pragma once
#include <string>
#include <vector>

#include "modelcost/graph.h"

namespace modelcost {

struct NodeCost {
  double macs = 0;
  double flops = 0;
  double params = 0;          // float weight elements this node reads
  double bytes_read = 0;
  double bytes_written = 0;
  bool known = false;         // false: no cost rule for this op (unknown op or domain)
  bool estimate = false;      // an input or output size is an upper bound
  double bytes() const { return bytes_read + bytes_written; }
  double arithmetic_intensity() const { return bytes() > 0 ? flops / bytes() : 0; }
};

struct NodeAnalysis {
  const Node* node = nullptr;
  const Graph* graph = nullptr;  // the graph that owns node (top level for reports)
  NodeCost cost;
  bool shaped = true;            // every output has a concrete shape
};

struct Totals {
  double macs = 0, flops = 0, params = 0, bytes_read = 0, bytes_written = 0;
  size_t nodes = 0, unshaped_nodes = 0, uncosted_nodes = 0, estimated_nodes = 0;
};

struct Analysis {
  const Model* model = nullptr;
  std::vector<NodeAnalysis> nodes;  // top-level nodes in topological order
  Totals totals;
  std::vector<std::string> warnings;
};

}  // namespace modelcost
