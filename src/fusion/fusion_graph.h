// What the fusion patterns read about the graph: who produces and who reads each tensor, which
// nodes run a kernel, what kind of work each op does, and which nodes are claimed by a group.
#pragma once
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "ops/op_traits.h"

namespace modelcost::fusion {

// How a runtime can fuse an op.
enum class OpKind {
  kMatrix,     // Conv, Gemm, MatMul, ...: anchors a kernel with an epilogue
  kPointwise,  // elementwise and broadcast math, casts, selects: fuses into any neighbour
  kLayout,     // Reshape, Transpose, Squeeze, Slice, Split, Concat, Expand, ...: an indexing change
  kReduction,  // ReduceMean, Softmax, LayerNormalization, pooling: a row or window reduction
  kOther,      // runs alone (Resize, NonZero, TopK, control flow, ...)
};

OpKind op_kind(const Node& node, const NodeCost& cost);

class FusionGraph {
 public:
  explicit FusionGraph(const Analysis& analysis);

  const Analysis& analysis() const { return analysis_; }
  const Graph& graph() const { return *graph_; }
  size_t size() const { return analysis_.nodes.size(); }
  const Node& node(size_t i) const { return *analysis_.nodes[i].node; }
  const NodeCost& cost(size_t i) const { return analysis_.nodes[i].cost; }
  OpKind kind(size_t i) const { return kinds_[i]; }
  const std::string& op(size_t i) const { return node(i).op_type; }
  // The traits of node i's op (its rule row's).
  OpTraits traits(size_t i) const;

  // The node writing tensor `id`, -1 for graph inputs, initializers and folded values.
  int producer(int id) const { return id >= 0 && id < int(producers_.size()) ? producers_[id] : -1; }
  // Nodes reading tensor `id` that run (folded readers such as Shape are left out).
  const std::vector<size_t>& consumers(int id) const { return consumers_[id]; }
  bool is_graph_output(int id) const { return graph_outputs_[id]; }
  // A tensor whose contents are known at analysis time (weights, constants, folded shapes), or a
  // reinterpretation of one (an Identity or Reshape of a weight).
  bool is_constant(int id) const;
  // Runs nothing: every output folded, or no work at all.
  bool is_idle(size_t i) const { return idle_[i]; }
  // Reads and writes nothing (a reinterpreting Reshape/Squeeze/Identity): its output aliases its input.
  bool is_alias(size_t i) const;
  // The tensor that really holds `id`'s data: follows reinterpreting producers back.
  int alias_root(int id) const;
  // The non-constant inputs of node i.
  std::vector<int> dynamic_inputs(size_t i) const;
  double tensor_bytes(int id) const;

  bool claimed(size_t i) const { return group_of_[i] >= 0; }
  int group_of(size_t i) const { return group_of_[i]; }
  void claim(size_t i, int group) { group_of_[i] = group; }
  bool has_readers(int id) const { return !consumers_[id].empty(); }
  // Tensors an in_place group already keeps inside another's buffer (in_place.cpp): none of them
  // can be placed a second time.
  void mark_held(int id) { held_[id] = true; }
  bool held(int id) const { return id >= 0 && held_[id]; }

 private:
  const Analysis& analysis_;
  const Graph* graph_ = nullptr;
  std::vector<OpKind> kinds_;
  std::vector<int> producers_;
  std::vector<std::vector<size_t>> consumers_;
  std::vector<bool> graph_outputs_;
  std::vector<bool> idle_;
  std::vector<int> group_of_;
  std::vector<bool> held_;
};

}  // namespace modelcost::fusion
