#include "costs/cost_model.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "modelcost/errors.h"
#include "ops/op_registry.h"

namespace modelcost {
namespace {

// Weights read, each counted once: initializer -> logical elements (float weights: their element
// count; quantized weights: what the op rule reports, e.g. K*N for MatMulNBits' packed B).
using WeightSet = std::unordered_map<const onnx::TensorProto*, double>;

double tensor_bytes(const TensorInfo& t) { return element_count(t.shape) * dtype_size(t.dtype); }

// An op that hands on values of its first input, moved, selected or converted but not computed:
// layout moves and views, gathers, conversions.
bool passes_values_on(const Node& node) {
  const OpTraits t = op_traits(node.domain, node.op_type);
  return t.form == OpForm::kLayout || t.form == OpForm::kGather || t.keeps_values();
}

// Integer initializers whose values reach a DequantizeLinear through gathers, slices and
// reshapes (an int8 embedding table read by Gather then dequantized): weights, counted by their
// elements at the node that reads them, as a float weight would be.
std::unordered_set<const onnx::TensorProto*> dequantized_integer_weights(const Graph& graph) {
  std::unordered_map<int, const Node*> producer;
  for (const Node& n : graph.nodes)
    for (int id : n.outputs)
      if (id >= 0) producer[id] = &n;
  std::unordered_set<const onnx::TensorProto*> found;
  for (const Node& n : graph.nodes) {
    if (n.op_type != "DequantizeLinear" || n.inputs.empty()) continue;
    int id = n.inputs[0];
    for (int hops = 0; id >= 0 && hops < 64; ++hops) {
      const TensorInfo& t = graph.tensors[id];
      if (t.initializer) {
        if (!dtype_is_float(t.dtype)) found.insert(t.initializer);
        break;
      }
      auto it = producer.find(id);
      if (it == producer.end() || !passes_values_on(*it->second) || it->second->inputs.empty()) break;
      id = it->second->inputs[0];
    }
  }
  return found;
}

// Adds `part`'s figures (not its known flag) into `total`.
void accumulate(NodeCost& total, const NodeCost& part) {
  total.macs += part.macs;
  total.flops += part.flops;
  total.params += part.params;
  total.bytes_read += part.bytes_read;
  total.bytes_written += part.bytes_written;
  total.estimate = total.estimate || part.estimate;
}

class CostWalker {
 public:
  CostWalker(const OpRegistry& registry, Diagnostics& diagnostics,
             std::unordered_set<const onnx::TensorProto*> dequantized)
      : registry_(registry), diagnostics_(diagnostics), dequantized_(std::move(dequantized)) {}

  NodeAnalysis analyse(const Graph& graph, const Node& node, WeightSet& weights);
  // Float initializers of the graph (and the graphs around it) a node reads.
  static const onnx::TensorProto* float_weight(const Graph& graph, int id);

 private:
  // The op rule's figures and the bytes of the node's own inputs and outputs.
  OpCost apply_rule(NodeAnalysis& result);
  // Distinct weights read: counted once per node, and once in `weights` for the totals.
  void count_parameters(const OpCost& op, NodeAnalysis& result, WeightSet& weights) const;
  // Subgraph bodies: their nodes' costs add into the node (If: the heavier branch).
  void add_bodies(const OpCost& op, NodeAnalysis& result, WeightSet& weights);

  const OpRegistry& registry_;
  Diagnostics& diagnostics_;
  std::unordered_set<const onnx::TensorProto*> dequantized_;
};

const onnx::TensorProto* CostWalker::float_weight(const Graph& graph, int id) {
  const TensorInfo& t = graph.tensors[id];
  return t.initializer && dtype_is_float(t.dtype) ? t.initializer : nullptr;
}

NodeAnalysis CostWalker::analyse(const Graph& graph, const Node& node, WeightSet& weights) {
  NodeAnalysis result;
  result.node = &node;
  result.graph = &graph;
  for (int id : node.outputs)
    if (id >= 0 && !graph.tensors[id].has_shape) result.shaped = false;
  for (int id : node.inputs)
    if (id >= 0 && !graph.tensors[id].has_shape) result.shaped = false;
  const OpCost op = apply_rule(result);
  count_parameters(op, result, weights);
  add_bodies(op, result, weights);
  return result;
}

OpCost CostWalker::apply_rule(NodeAnalysis& result) {
  const Graph& graph = *result.graph;
  const Node& node = *result.node;
  NodeCost& cost = result.cost;
  const OpRule* rule = registry_.find(node.domain, node.op_type);
  OpCost op;
  if (rule && rule->cost && result.shaped) {
    OpContext c(const_cast<Graph&>(graph), node, diagnostics_);
    try {
      op = rule->cost(c);
      cost.known = true;
    } catch (const NotInferable& e) {
      diagnostics_.warn_counted(node.op_type + ": cost unknown: " + e.what(), node.name);
    }
  }
  if (cost.known) {
    cost.macs = op.macs;
    cost.flops = op.flops;
    cost.estimate = op.estimate;
    if (!op.moves_no_data) {
      for (int id : node.inputs)
        if (id >= 0) cost.bytes_read += tensor_bytes(graph.tensors[id]);
      for (int id : node.outputs)
        if (id >= 0) cost.bytes_written += tensor_bytes(graph.tensors[id]);
    }
    if (op.bytes_read >= 0) cost.bytes_read = op.bytes_read;
  }
  for (int id : node.inputs) if (id >= 0 && graph.tensors[id].estimate) cost.estimate = true;
  for (int id : node.outputs) if (id >= 0 && graph.tensors[id].estimate) cost.estimate = true;
  return op;
}

void CostWalker::count_parameters(const OpCost& op, NodeAnalysis& result, WeightSet& weights) const {
  const Graph& graph = *result.graph;
  const Node& node = *result.node;
  WeightSet own;
  auto count = [&](const onnx::TensorProto* w, double elements) {
    if (!w || !own.emplace(w, 0).second) return;
    result.cost.params += elements;
    weights.emplace(w, elements);
  };
  for (int id : node.inputs)
    if (id >= 0) count(float_weight(graph, id), element_count(graph.tensors[id].shape));
  for (int id : node.inputs) {
    const onnx::TensorProto* w = id >= 0 ? graph.tensors[id].initializer : nullptr;
    if (w && dequantized_.count(w)) count(w, element_count(graph.tensors[id].shape));
  }
  for (const auto& [input, elements] : op.quantized_weights) {
    const int id = input < node.inputs.size() ? node.inputs[input] : -1;
    count(id >= 0 ? graph.tensors[id].initializer : nullptr, elements);
  }
}

void CostWalker::add_bodies(const OpCost& op, NodeAnalysis& result, WeightSet& weights) {
  const Node& node = *result.node;
  if (node.subgraphs.empty()) return;
  NodeCost body_total;
  bool body_known = true;
  for (size_t s = 0; s < node.subgraphs.size(); ++s) {
    const Subgraph& sub = node.subgraphs[s];
    if (op.subgraph_only >= 0 && s != static_cast<size_t>(op.subgraph_only)) continue;  // branch not taken
    NodeCost body;
    for (const Node& inner : sub.graph->nodes) {
      NodeAnalysis a = analyse(*sub.graph, inner, weights);
      if (!a.shaped) result.shaped = false;
      if (!a.cost.known) body_known = false;
      accumulate(body, a.cost);
    }
    if (op.subgraph_max) {
      if (body.flops + body.bytes() >= body_total.flops + body_total.bytes()) body_total = body;
      body_total.estimate = true;
    } else {
      accumulate(body_total, body);
    }
  }
  NodeCost& cost = result.cost;
  const double r = op.subgraph_repeats;
  // A body without work adds none however often it runs (and no 0 * huge = NaN).
  auto repeated = [r](double body_figure) { return body_figure == 0 ? 0.0 : r * body_figure; };
  cost.macs += repeated(body_total.macs);
  cost.flops += repeated(body_total.flops);
  cost.bytes_read += repeated(body_total.bytes_read);
  cost.bytes_written += repeated(body_total.bytes_written);
  cost.params += body_total.params;
  cost.estimate = cost.estimate || body_total.estimate;
  if (!body_known) cost.known = false;
  // Nested bodies multiply their repeats (Scans over 2^40 slices, 40 deep): past a double's
  // range the figures would read "inf", a wrong answer.
  if (!std::isfinite(cost.macs + cost.flops + cost.bytes_read + cost.bytes_written)) {
    char repeats[32];
    std::snprintf(repeats, sizeof repeats, "%.3g", r);
    throw NodeError(node.name, node.op_type, std::string("its body's work, repeated ") + repeats +
                                                 " times, is past what a double holds (1.8e308)");
  }
}

// The share of nodes left unshaped and the unknown ops that are the likely cause.
std::string unshaped_warning(const Model& model, const OpRegistry& registry, const Totals& t) {
  std::set<std::string> unknown;
  for (const Node& node : model.graph.nodes)
    if (!registry.find(node.domain, node.op_type)) unknown.insert((node.domain.empty() ? "" : node.domain + ".") + node.op_type);
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(t.unshaped_nodes) / static_cast<double>(t.nodes));
  std::string message = std::to_string(t.unshaped_nodes) + " of " + std::to_string(t.nodes) + " nodes (" + share +
                        ") are left without a concrete shape; their cost is missing from the totals";
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "" : ", ") + u;
    message += " (unknown ops: " + names + "; declare them with --ops FILE)";
  }
  return message;
}

}  // namespace

Analysis compute_costs(const Model& model, std::shared_ptr<const Graph> shaped, const OpRegistry& registry,
                       Diagnostics& diagnostics) {
  Analysis analysis;
  analysis.model = &model;
  analysis.graph = std::move(shaped);
  const Graph& graph = *analysis.graph;
  CostWalker walker(registry, diagnostics, dequantized_integer_weights(graph));
  WeightSet weights;
  Totals& t = analysis.totals;
  analysis.nodes.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    NodeAnalysis a = walker.analyse(graph, node, weights);
    t.macs += a.cost.macs;
    t.flops += a.cost.flops;
    t.bytes_read += a.cost.bytes_read;
    t.bytes_written += a.cost.bytes_written;
    ++t.nodes;
    if (!a.shaped) ++t.unshaped_nodes;
    if (!a.cost.known) ++t.uncosted_nodes;
    if (a.cost.estimate) ++t.estimated_nodes;
    analysis.nodes.push_back(a);
  }
  for (const auto& [w, elements] : weights) t.params += elements;
  if (!std::isfinite(t.macs + t.flops + t.bytes_read + t.bytes_written + t.params))
    throw Error(kExitInvalidModel, "the model's total work is past what a double holds (1.8e308)");
  if (t.unshaped_nodes) diagnostics.warn(unshaped_warning(model, registry, t));
  if (t.estimated_nodes)
    diagnostics.warn(std::to_string(t.estimated_nodes) +
                     " node(s) have data-dependent sizes; their figures are upper bounds (marked estimate)");
  analysis.warnings = diagnostics.warnings();
  return analysis;
}

std::string describe_unshaped(const Analysis& analysis, const OpRegistry& registry) {
  return unshaped_warning(*analysis.model, registry, analysis.totals);
}

}  // namespace modelcost
