// Sibling products: matrix products of one input by constant weights of one shape (an encoder's
// query, key and value projections; a gated MLP's gate and up projections), each with its bias.
// Runtimes run them as one call (torch.compile's frozen linears concatenated, vLLM's merged
// QKV): the input is read once and one launch covers all of them. The deployed runtime runs
// them as one strided batched GEMM whose outputs sit side by side in memory.
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "fusion/patterns.h"
#include "ops/op_registry.h"

namespace modelcost::fusion {
namespace {

// One product of a sibling set: the matrix node and its bias Add (-1: none).
struct Sibling {
  size_t product = 0;
  int bias_add = -1;
};

// A float product of `input` by a constant 2-D weight, plain (no attributes, two operands: a
// MatMul, or a Gemm with every default), unclaimed and running.
bool plain_product(const FusionGraph& g, size_t i, int input) {
  if (g.claimed(i) || g.is_idle(i) || g.kind(i) != OpKind::kMatrix) return false;
  const OpTraits t = g.traits(i);
  if (t.form != OpForm::kGemm || t.integer_math || t.free_dim_order) return false;
  const Node& n = g.node(i);
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || n.inputs[0] != input || !g.is_constant(n.inputs[1])) return false;
  if (n.proto && n.proto->attribute_size() > 0) return false;
  const TensorInfo& w = g.graph().tensors[n.inputs[1]];
  const TensorInfo& y = g.graph().tensors[n.outputs[0]];
  return w.has_shape && w.shape.size() == 2 && y.has_shape && dtype_is_float(y.dtype) && n.outputs[0] >= 0;
}

// The Add of a constant [N] bias to product `i`'s output where it is that output's one reader.
int bias_add_of(const FusionGraph& g, size_t i) {
  const int out = g.node(i).outputs[0];
  if (g.is_graph_output(out) || g.consumers(out).size() != 1) return -1;
  const size_t c = g.consumers(out).front();
  if (g.claimed(c) || g.is_idle(c) || !g.traits(c).epilogue_add || g.node(c).inputs.size() != 2) return -1;
  const Node& add = g.node(c);
  const int other = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
  if (other < 0 || other == out || !g.is_constant(other)) return -1;
  const TensorInfo& bias = g.graph().tensors[other];
  const TensorInfo& y = g.graph().tensors[out];
  const TensorInfo& sum = g.graph().tensors[add.outputs[0]];
  if (!bias.has_shape || !y.has_shape || !sum.has_shape || y.shape.empty() || sum.shape != y.shape) return -1;
  // A row vector over the output's columns: one value per column, every other dim 1.
  if (bias.shape.empty() || bias.shape.back() != y.shape.back()) return -1;
  for (size_t d = 0; d + 1 < bias.shape.size(); ++d)
    if (bias.shape[d] != 1) return -1;
  return static_cast<int>(c);
}

// Whether every reader of `id`, through views of it, already belongs to a kernel (attention
// reading Q, K and V; a gated MLP's gate): the product leaves no epilogue work behind that its
// own epilogue group would have taken.
bool read_by_claimed(const FusionGraph& g, int id, int depth = 0) {
  if (g.is_graph_output(id) || depth > 8) return false;
  for (size_t c : g.consumers(id)) {
    if (g.claimed(c)) continue;
    if (!g.is_alias(c)) return false;
    for (int out : g.node(c).outputs)
      if (out >= 0 && !read_by_claimed(g, out, depth + 1)) return false;
  }
  return true;
}

// The tensor sibling `s` leaves to its readers: its bias Add's result, or its own.
int sibling_result(const FusionGraph& g, const Sibling& s) {
  return g.node(s.bias_add >= 0 ? static_cast<size_t>(s.bias_add) : s.product).outputs[0];
}

}  // namespace

std::optional<GroupCandidate> match_sibling_products(const FusionGraph& g, size_t i) {
  const Node& seed = g.node(i);
  if (seed.inputs.empty() || seed.inputs[0] < 0 || g.is_constant(seed.inputs[0])) return std::nullopt;
  const int input = seed.inputs[0];
  if (!plain_product(g, i, input)) return std::nullopt;
  const Shape& weight = g.graph().tensors[seed.inputs[1]].shape;
  const bool biased = bias_add_of(g, i) >= 0;
  std::vector<Sibling> siblings;
  for (size_t c : g.consumers(input)) {
    if (!plain_product(g, c, input) || g.graph().tensors[g.node(c).inputs[1]].shape != weight) continue;
    const int add = bias_add_of(g, c);
    const Sibling s{c, add};
    if ((add >= 0) == biased && read_by_claimed(g, sibling_result(g, s))) siblings.push_back(s);
  }
  if (siblings.size() < 2) return std::nullopt;
  GroupCandidate candidate;
  for (const Sibling& s : siblings) {
    candidate.members.push_back(s.product);
    if (s.bias_add >= 0) candidate.members.push_back(static_cast<size_t>(s.bias_add));
  }
  std::sort(candidate.members.begin(), candidate.members.end());
  candidate.anchor = std::min_element(siblings.begin(), siblings.end(), [](const Sibling& a, const Sibling& b) {
                       return a.product < b.product;
                     })->product;
  return candidate;
}

std::string sibling_label(const FusionGraph& g, const FusedGroup& group) {
  size_t products = 0;
  bool biased = false;
  for (size_t m : group.members) {
    if (g.kind(m) == OpKind::kMatrix) ++products;
    else biased = true;
  }
  return std::to_string(products) + "x matmul" + (biased ? "+bias" : "");
}

}  // namespace modelcost::fusion

namespace modelcost {

std::vector<int> sibling_outputs(const FusedGroup& group, const Analysis& analysis) {
  std::vector<int> outputs;
  if (group.pattern != "sibling_products") return outputs;
  for (size_t m : group.members) {
    const Node& node = *analysis.nodes[m].node;
    if (node.outputs.empty() || analysis.nodes[m].cost.macs <= 0) continue;  // a bias Add
    int out = node.outputs[0];
    for (size_t reader : group.members) {  // its bias Add writes the product's result
      const Node& r = *analysis.nodes[reader].node;
      if (reader != m && op_traits(r.domain, r.op_type).epilogue_add && std::count(r.inputs.begin(), r.inputs.end(), node.outputs[0]))
        out = r.outputs[0];
    }
    outputs.push_back(out);
  }
  return outputs;
}

}  // namespace modelcost
