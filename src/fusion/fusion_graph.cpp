#include "fusion/fusion_graph.h"

#include <set>

#include "ops/op_registry.h"

#include "modelcost/fusion.h"

namespace modelcost::fusion {

OpKind op_kind(const Node& node, const NodeCost& cost) {
  // The ai.onnx.ml ops run on the host in every runtime: they fuse with nothing.
  if (node.domain == "ai.onnx.ml") return OpKind::kOther;
  switch (op_traits(node.domain, node.op_type).form) {
    case OpForm::kConv:
    case OpForm::kGemm:
    case OpForm::kAttention: return cost.macs > 0 ? OpKind::kMatrix : OpKind::kOther;
    case OpForm::kPointwise: return OpKind::kPointwise;
    case OpForm::kLayout:
    case OpForm::kGather: return OpKind::kLayout;
    case OpForm::kReduction:
    case OpForm::kNorm:
    case OpForm::kPooling: return OpKind::kReduction;
    case OpForm::kScatter:
    case OpForm::kOther:
    case OpForm::kUnset: return cost.macs > 0 ? OpKind::kMatrix : OpKind::kOther;
  }
  return OpKind::kOther;
}

FusionGraph::FusionGraph(const Analysis& analysis) : analysis_(analysis) {
  static const Graph empty;
  graph_ = analysis.graph ? analysis.graph.get() : analysis.nodes.empty() ? &empty : analysis.nodes.front().graph;
  const size_t tensors = graph_->tensors.size();
  producers_.assign(tensors, -1);
  consumers_.assign(tensors, {});
  graph_outputs_.assign(tensors, false);
  for (int id : graph_->outputs)
    if (id >= 0) graph_outputs_[id] = true;
  kinds_.resize(size());
  idle_.resize(size());
  group_of_.assign(size(), -1);
  held_.assign(tensors, false);
  for (size_t i = 0; i < size(); ++i) {
    const NodeAnalysis& na = analysis.nodes[i];
    kinds_[i] = op_kind(*na.node, na.cost);
    bool any_output = false;
    for (int id : na.node->outputs) any_output = any_output || id >= 0;
    idle_[i] = (na.cost.known && na.cost.flops <= 0 && na.cost.bytes() <= 0 && kinds_[i] != OpKind::kLayout) ||
               (any_output && outputs_known(na));
    for (int id : na.node->outputs)
      if (id >= 0 && !idle_[i]) producers_[id] = static_cast<int>(i);
  }
  for (size_t i = 0; i < size(); ++i) {
    if (idle_[i]) continue;
    std::set<int> seen;
    for (int id : node(i).inputs)
      if (id >= 0 && seen.insert(id).second) consumers_[id].push_back(i);
    for (int id : node(i).implicit_inputs)
      if (id >= 0 && id < int(tensors) && seen.insert(id).second) consumers_[id].push_back(i);
  }
}

bool FusionGraph::is_constant(int id) const {
  // Through reinterpreting nodes: exporters route shared weights through Identity (a bias behind
  // one is still a bias), and a runtime folds a Reshape of a weight away.
  id = alias_root(id);
  const TensorInfo& t = graph_->tensors[id];
  return t.is_initializer || t.value != nullptr || (producer(id) < 0 && !t.is_graph_input);
}

OpTraits FusionGraph::traits(size_t i) const { return op_traits(node(i).domain, op(i)); }

bool FusionGraph::is_alias(size_t i) const {
  return kinds_[i] == OpKind::kLayout && cost(i).known && cost(i).bytes() <= 0 && cost(i).flops <= 0;
}

int FusionGraph::alias_root(int id) const {
  for (int guard = 0; guard < 64; ++guard) {
    const int p = producer(id);
    if (p < 0 || !is_alias(p) || node(p).inputs.empty() || node(p).inputs.front() < 0) return id;
    id = node(p).inputs.front();
  }
  return id;
}

std::vector<int> FusionGraph::dynamic_inputs(size_t i) const {
  std::vector<int> out;
  for (int id : node(i).inputs)
    if (id >= 0 && !is_constant(id)) out.push_back(id);
  return out;
}

double FusionGraph::tensor_bytes(int id) const {
  const TensorInfo& t = graph_->tensors[id];
  return element_count(t.shape) * dtype_size(t.dtype);
}

}  // namespace modelcost::fusion
