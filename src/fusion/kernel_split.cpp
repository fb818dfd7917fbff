// Pattern matches the deployed runtime cannot run as one kernel, planned as their members: the
// plan the predictor prices is the plan --measure runs, with no silent fallback (docs/fusion.md,
// "Kernel plan").
#include "fusion/patterns.h"
#include "fusion/tensor_access.h"

namespace modelcost::fusion {
namespace {

// The first output's shape where it is known.
const Shape* output_shape(const FusionGraph& g, size_t m) {
  const TensorInfo* t = shaped_operand(g.analysis().nodes[m], 0, true);
  return t ? &t->shape : nullptr;
}

// Names the op, not the node: the reasons of one network's matches then read alike.
std::string member_name(const FusionGraph& g, size_t m) { return "the " + g.op(m); }

// One flash-attention kernel: scores = Q K^T and P V chain, with a head size the kernel has.
std::string attention_apart(const FusionGraph& g, const std::vector<size_t>& members) {
  std::vector<size_t> products;
  for (size_t m : members)
    if (g.kind(m) == OpKind::kMatrix) products.push_back(m);
  if (products.size() != 2) return "the attention match has " + std::to_string(products.size()) + " matrix products, not 2";
  const std::vector<GemmShape> scores = gemm_shapes(g.analysis().nodes[products[0]]);
  const std::vector<GemmShape> values = gemm_shapes(g.analysis().nodes[products[1]]);
  if (scores.size() != 1 || values.size() != 1) return "";  // shapes unknown: priced as matched
  const GemmShape& s = scores.front();
  const GemmShape& v = values.front();
  if (v.count != s.count || v.k != s.n || v.n != s.k || v.m != s.m) return "the two products do not chain as attention";
  if (!flash_attention_head_size(static_cast<int64_t>(s.k)))
    return "head size " + std::to_string(static_cast<int64_t>(s.k)) + " (the flash-attention kernel runs 32, 64 and 128)";
  return "";
}

double elements_of(const FusionGraph& g, int id) { return id >= 0 ? element_count(g.graph().tensors[id].shape) : 0; }

// The members the conv or GEMM library call takes into its own epilogue, walking from the
// product's output: reinterpreting views, then a bias or a residual Add, up to one ReLU or clip.
std::vector<size_t> library_epilogue(const FusionGraph& g, const std::vector<size_t>& members, size_t anchor) {
  std::vector<size_t> taken;
  const Node& product = g.node(anchor);
  int out = product.outputs.empty() ? -1 : product.outputs.front();
  const Shape* shape = output_shape(g, anchor);
  if (out < 0 || !shape || shape->empty()) return taken;
  const bool conv = g.traits(anchor).form == OpForm::kConv;
  const double channels = static_cast<double>(conv && shape->size() > 1 ? (*shape)[1] : shape->back());
  bool bias = product.inputs.size() > 2 && product.inputs[2] >= 0, residual = false;
  while (out >= 0 && g.consumers(out).size() == 1 && contains(members, g.consumers(out).front())) {
    const size_t c = g.consumers(out).front();
    const Node& node = g.node(c);
    if (node.outputs.empty()) break;
    if (g.is_alias(c)) {
      out = node.outputs.front();
      continue;
    }
    const OpTraits traits = g.traits(c);
    if (traits.epilogue_add && node.inputs.size() == 2) {
      const int other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
      const double n = elements_of(g, other), whole = elements_of(g, out);
      const int p = g.producer(other);
      if (n == channels && n != whole && !bias) bias = true;
      else if (n == whole && !residual && (p < 0 || !contains(members, size_t(p)))) residual = true;
      else break;
    } else if (!traits.epilogue_activation) {
      break;
    }
    taken.push_back(c);
    out = node.outputs.front();
    if (traits.epilogue_activation) break;  // the activation ends the library's epilogue
  }
  return taken;
}

}  // namespace

std::string why_apart(const FusionGraph& g, const std::string& pattern, const std::vector<size_t>& members, size_t anchor) {
  if (pattern == "fused_op") return "";
  if (pattern == "attention") return attention_apart(g, members);
  // What launches: views and permutations fold into their neighbours' operand layouts.
  std::vector<size_t> running;
  for (size_t m : members)
    if (!g.is_idle(m) && !g.is_alias(m) && !g.traits(m).folds_into_operand()) running.push_back(m);
  if (running.size() <= 1) return "";
  // A conv or matrix product runs its library call with the epilogue it takes (bias, a folded
  // BatchNorm, activation, residual); everything else must be one chain of elementwise work over
  // one iteration shape, which is what the runtime generates after the library call.
  const bool anchored = g.kind(anchor) == OpKind::kMatrix;
  const std::vector<size_t> library = anchored ? library_epilogue(g, members, anchor) : std::vector<size_t>{};
  const Shape* dims = nullptr;
  for (size_t m : running) {
    if (anchored && (m == anchor || g.traits(m).stored_statistics || contains(library, m))) continue;
    if (g.kind(m) != OpKind::kPointwise)
      return anchored ? member_name(g, m) + " member is not elementwise: it does not fuse into the epilogue"
                      : member_name(g, m) + " member is not elementwise, and no conv or matrix product anchors the group";
    const Shape* shape = output_shape(g, m);
    if (!shape) continue;
    if (dims && *shape != *dims) return "its elementwise members iterate different shapes";
    dims = shape;
  }
  return "";
}

}  // namespace modelcost::fusion
