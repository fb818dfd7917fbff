// What the cost stage produces and every later stage (roofline, measurement, reports) reads.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modelcost/graph.h"

namespace modelcost {

class OpRegistry;

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
  const Node* node = nullptr;    // in Analysis::graph
  const Graph* graph = nullptr;  // the graph that owns node (top level for reports)
  NodeCost cost;
  bool shaped = true;            // every output has a concrete shape
};

struct Totals {
  double macs = 0, flops = 0, params = 0, bytes_read = 0, bytes_written = 0;
  size_t nodes = 0, unshaped_nodes = 0, uncosted_nodes = 0, estimated_nodes = 0;
};

// What to analyse the model at: the values of its symbolic dims and whole input shapes.
struct AnalysisOptions {
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE: symbolic dim values
  std::map<std::string, Shape> inputs;  // --input NAME=1x3x224x224: whole input shapes
  // The op rule table to use; nullptr = the built-in one (--ops FILE adds user rules to a copy).
  const OpRegistry* registry = nullptr;
};

struct Analysis {
  const Model* model = nullptr;       // the input, unchanged; must outlive the analysis
  std::shared_ptr<const Graph> graph;  // the model's top-level graph with every tensor shaped
  std::vector<NodeAnalysis> nodes;  // top-level nodes of `graph` in topological order
  Totals totals;
  std::vector<std::string> warnings;
};

// The analysis of `model` at `options`: shapes (on a copy of the model's graph), then costs. A pure
// function: the model is not changed, so one loaded model serves any number of analyses (the
// capacity plan's batch sweep). Throws Error for inputs the options name wrongly or invalid nodes.
Analysis analyze(const Model& model, const AnalysisOptions& options = {});

}  // namespace modelcost
