// Stage 2: gives every tensor of (a copy of) the graph a concrete dtype and shape, running each node's
// shape rule in topological order and folding small integer tensors along the way.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "modelcost/analysis.h"
#include "modelcost/diagnostics.h"
#include "modelcost/graph.h"
#include "ops/op_context.h"

namespace modelcost {

class OpRegistry;
class OpContext;

using ShapeOptions = AnalysisOptions;

class ShapeEngine : public BodyInference {
 public:
  ShapeEngine(const OpRegistry& registry, Diagnostics& diagnostics);

  // A copy of the model's graph with its inputs set from the options and the declared shapes,
  // and every node inferred. The model is not changed.
  std::shared_ptr<Graph> run(const Model& model, const ShapeOptions& options);
  // Infers a subgraph whose inputs and outer-scope tensors are already set (If/Loop/Scan).
  void infer_graph(Graph& graph) override;

  const ShapeOptions& options() const { return options_; }

  // ---- budgets: a hostile file gets an error or an estimate, never hours or gigabytes ----
  // Elements of folded values created in one run (each tensor holds at most kMaxFoldedElements).
  static constexpr double kMaxFoldedTotal = 1 << 24;
  // Node inferences in one run, subgraph passes included (nested Loops re-infer their bodies).
  static constexpr size_t kMaxNodeInferences = 1000000;
  bool may_fold(double elements) const override { return folded_ + elements <= kMaxFoldedTotal; }
  void charge_fold(double elements) override { folded_ += elements; }
  bool work_strained() const override { return inferences_ > kMaxNodeInferences / 2; }

 private:
  void infer_node(Graph& graph, Node& node);
  void infer_unknown_op(OpContext& c);
  void apply_declared_shapes(Graph& graph, const Node& node);
  bool resolve_declared(const TensorInfo& tensor, int32_t* dtype, Shape* shape) const;

  const OpRegistry& registry_;
  Diagnostics& diagnostics_;
  ShapeOptions options_;
  double folded_ = 0;
  size_t inferences_ = 0;
};

}  // namespace modelcost
