// The pattern table and the matchers that grow a group forward from a seed node.
#include "fusion/patterns.h"

#include <algorithm>
#include <set>


namespace modelcost::fusion {

bool contains(const std::vector<size_t>& members, size_t m) {
  return std::find(members.begin(), members.end(), m) != members.end();
}

const std::vector<FusionPattern>& pattern_table() {
  // Tried in this order over the nodes in topological order; a row claims its members, so later
  // rows see only what earlier rows left. Every row costs its group by the traffic crossing the
  // group boundary (docs/fusion.md): tensors that live only inside the kernel cost nothing.
  static const std::vector<FusionPattern> table = {
      // com.microsoft contrib ops (FusedConv, Attention, SkipLayerNormalization, ...) are one kernel already.
      {"fused_op", match_fused_op, boundary_cost, op_label},
      // QK^T MatMul, scale, mask, Softmax, PV MatMul, with rotary, GQA repeat and layout on Q/K/V:
      // one flash-attention kernel that never writes the score matrix.
      {"attention", match_attention, boundary_cost, attention_label},
      // silu(gate) * up: one pointwise kernel reading the two projections.
      {"swiglu", match_swiglu, boundary_cost, region_label},
      // Products of one input by constant weights of one shape, each with its bias (Q, K and V;
      // gate and up): one batched GEMM that reads the input once (sibling_products.cpp).
      {"sibling_products", match_sibling_products, boundary_cost, sibling_label},
      // A Slice or Split whose outputs are contiguous runs of its input, or a Concat whose inputs
      // their producers can write into place: no kernel (in_place.cpp).
      {"in_place", match_in_place, in_place_cost, in_place_label, mark_held_tensors},
      // Conv/Gemm/MatMul with its epilogue: bias, a conv's BatchNorm or per-channel scale,
      // activation, residual add, and layout changes of its output.
      {"epilogue", match_epilogue, boundary_cost, epilogue_label},
      // A reshape or transpose left over folds into the kernel that reads (or writes) it.
      {"layout_fold", match_layout_fold, boundary_cost, op_label},
      // Chains of elementwise, broadcast and row-reduction ops: one pointwise or norm kernel
      // (LayerNorm, RMSNorm, Softmax, GELU, SiLU, HardSwish spelled out).
      {"pointwise", match_region, boundary_cost, region_label},
      // Anything else runs alone.
      {"single", match_single, boundary_cost, op_label},
  };
  return table;
}

std::optional<GroupCandidate> match_fused_op(const FusionGraph& g, size_t i) {
  if (g.node(i).domain != "com.microsoft" || g.is_idle(i)) return std::nullopt;
  return GroupCandidate{{i}, i};
}

namespace {

double output_elements(const FusionGraph& g, size_t i) {
  double most = 0;
  for (int id : g.node(i).outputs)
    if (id >= 0) most = std::max(most, element_count(g.graph().tensors[id].shape));
  return most;
}

bool consumed_inside(const FusionGraph& g, const std::vector<size_t>& members, size_t m) {
  for (int id : g.node(m).outputs)
    if (id >= 0)
      for (size_t c : g.consumers(id))
        if (contains(members, c)) return true;
  return false;
}

}  // namespace

size_t exit_count(const FusionGraph& g, const std::vector<size_t>& members) {
  size_t exits = 0;
  for (size_t m : members)
    for (int id : g.node(m).outputs) {
      if (id < 0) continue;
      bool out = g.is_graph_output(id);
      for (size_t c : g.consumers(id)) out = out || !contains(members, c);
      exits += out ? 1 : 0;
    }
  return exits;
}

namespace {

// A kernel writes one result: while the group has more than one output, drop the latest member
// whose results nothing inside reads (a Pow feeding the next norm's reduction, say).
void prune_extra_outputs(const FusionGraph& g, std::vector<size_t>& members, size_t anchor) {
  while (exit_count(g, members) > 1) {
    auto sink = std::find_if(members.rbegin(), members.rend(),
                             [&](size_t m) { return m != anchor && !consumed_inside(g, members, m); });
    if (sink == members.rend()) return;
    members.erase(std::next(sink).base());
  }
}

struct Growth {
  std::set<OpKind> admits;
  double max_output_elements = 0;  // 0: no limit
};

// Adds, until nothing changes, every unclaimed consumer of a member that the growth admits and
// whose other inputs exist before the seed runs (constants, graph inputs, earlier nodes): so the
// group stays one kernel that never waits on work scheduled after it.
std::vector<size_t> grow_forward(const FusionGraph& g, size_t seed, const Growth& growth) {
  std::vector<size_t> members = {seed};
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < members.size(); ++k) {
      for (int id : g.node(members[k]).outputs) {
        if (id < 0) continue;
        for (size_t c : g.consumers(id)) {
          if (contains(members, c) || g.claimed(c) || g.is_idle(c) || !growth.admits.count(g.kind(c))) continue;
          if (growth.max_output_elements > 0 && output_elements(g, c) > growth.max_output_elements) continue;
          bool ready = true;
          for (int in : g.dynamic_inputs(c)) {
            const int p = g.producer(in);
            ready = ready && (p < 0 || contains(members, size_t(p)) || size_t(p) < seed);
          }
          if (!ready) continue;
          members.push_back(c);
          changed = true;
        }
      }
    }
  }
  std::sort(members.begin(), members.end());
  prune_extra_outputs(g, members, seed);
  return members;
}

// The Mul of x and sigmoid(x) producing tensor `id`, or -1.
int silu_mul(const FusionGraph& g, int id) {
  const int mul = g.producer(id);
  if (mul < 0 || g.op(mul) != "Mul" || g.node(mul).inputs.size() != 2) return -1;
  for (int k = 0; k < 2; ++k) {
    const int sig = g.producer(g.node(mul).inputs[k]);
    if (sig >= 0 && g.op(sig) == "Sigmoid" && g.node(sig).inputs.front() == g.node(mul).inputs[1 - k]) return mul;
  }
  return -1;
}

}  // namespace

std::optional<GroupCandidate> match_swiglu(const FusionGraph& g, size_t i) {
  if (g.op(i) != "Mul") return std::nullopt;
  const std::vector<int> in = g.dynamic_inputs(i);
  if (in.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int mul = silu_mul(g, in[k]);
    if (mul < 0 || g.claimed(mul) || g.consumers(in[k]).size() != 1) continue;
    int sig = -1;
    for (int id : g.node(mul).inputs)
      if (g.producer(id) >= 0 && g.op(g.producer(id)) == "Sigmoid") sig = g.producer(id);
    if (sig < 0 || g.claimed(sig) || g.consumers(g.node(sig).outputs.front()).size() != 1) continue;
    if (g.node(sig).inputs.front() == in[1 - k]) continue;  // x * silu(x) is no gate
    std::vector<size_t> members = {size_t(sig), size_t(mul), i};
    std::sort(members.begin(), members.end());
    return GroupCandidate{members, i};
  }
  return std::nullopt;
}

std::optional<GroupCandidate> match_epilogue(const FusionGraph& g, size_t i) {
  if (g.kind(i) != OpKind::kMatrix || g.is_idle(i)) return std::nullopt;
  // An epilogue works per output element of the product: it may not broadcast to a larger result.
  // An inference BatchNormalization joins as any elementwise member: reading a conv's output it
  // folds into the conv's weights, anywhere else it is a scale and a shift of the chain after.
  Growth growth{{OpKind::kPointwise, OpKind::kLayout}, output_elements(g, i)};
  return GroupCandidate{grow_forward(g, i, growth), i};
}

std::optional<GroupCandidate> match_layout_fold(const FusionGraph& g, size_t i) {
  // A view, or a permutation (a GEMM reads a transposed operand in place).
  if (!g.traits(i).folds_into_operand() || g.is_idle(i)) return std::nullopt;
  // Into the one kernel that reads it (a GEMM reads a transposed operand in place) ...
  int reader = -1;
  bool one_reader = true;
  for (int id : g.node(i).outputs)
    for (size_t c : g.consumers(id)) {
      if (reader >= 0 && g.group_of(c) != g.group_of(size_t(reader))) one_reader = false;
      if (reader < 0) reader = int(c);
    }
  if (reader >= 0 && one_reader && g.claimed(reader)) return GroupCandidate{{i, size_t(reader)}, size_t(reader)};
  // ... else into the kernel that writes its input.
  for (int id : g.dynamic_inputs(i)) {
    const int p = g.producer(g.alias_root(id));
    if (p >= 0 && g.claimed(p)) return GroupCandidate{{size_t(p), i}, size_t(p)};
  }
  return std::nullopt;
}

std::optional<GroupCandidate> match_region(const FusionGraph& g, size_t i) {
  const OpKind kind = g.kind(i);
  if (g.is_idle(i) || !(kind == OpKind::kPointwise || kind == OpKind::kLayout || kind == OpKind::kReduction))
    return std::nullopt;
  Growth growth{{OpKind::kPointwise, OpKind::kLayout, OpKind::kReduction}, 0};
  return GroupCandidate{grow_forward(g, i, growth), i};
}

std::optional<GroupCandidate> match_single(const FusionGraph& g, size_t i) {
  return GroupCandidate{{i}, i};
}

}  // namespace modelcost::fusion
