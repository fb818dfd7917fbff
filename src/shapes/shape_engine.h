// Stage 2: gives every tensor of the graph a concrete dtype and shape, running each node's
// shape rule in topological order and folding small integer tensors along the way.
#pragma once
#include <map>
#include <string>

#include "modelcost/diagnostics.h"
#include "modelcost/graph.h"

namespace modelcost {

class OpRegistry;

struct ShapeOptions {
  std::map<std::string, int64_t> dims;    // --dim NAME=VALUE: symbolic dim values
  std::map<std::string, Shape> inputs;    // --input NAME=1x3x224x224: whole input shapes
};

class ShapeEngine {
 public:
  ShapeEngine(const OpRegistry& registry, Diagnostics& diagnostics);

  // Sets the graph inputs from the options and the declared shapes, then infers every node.
  void run(Model& model, const ShapeOptions& options);
  // Infers a subgraph whose inputs and outer-scope tensors are already set (If/Loop/Scan).
  void infer_graph(Graph& graph);

  const ShapeOptions& options() const { return options_; }

  // ---- budgets: a hostile file gets an error or an estimate, never hours or gigabytes ----
  // Elements of folded values created in one run (each tensor holds at most kMaxFoldedElements).
  static constexpr double kMaxFoldedTotal = 1 << 24;
  // Node inferences in one run, subgraph passes included (nested Loops re-infer their bodies).
  static constexpr size_t kMaxNodeInferences = 1000000;
  // Whether a new folded value of `elements` elements still fits; charge_fold books it.
  bool may_fold(double elements) const { return folded_ + elements <= kMaxFoldedTotal; }
  void charge_fold(double elements) { folded_ += elements; }
  // True once half the inference budget is spent: loops stop re-inferring bodies (estimates).
  bool work_strained() const { return inferences_ > kMaxNodeInferences / 2; }

 private:
  void infer_node(Graph& graph, Node& node);
  void apply_declared_shapes(Graph& graph, const Node& node);
  bool resolve_declared(const TensorInfo& tensor, int32_t* dtype, Shape* shape) const;

  const OpRegistry& registry_;
  Diagnostics& diagnostics_;
  ShapeOptions options_;
  double folded_ = 0;
  size_t inferences_ = 0;
};

}  // namespace modelcost
