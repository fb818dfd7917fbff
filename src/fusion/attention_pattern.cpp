// Scaled-dot-product attention as exporters spell it out: Q K^T MatMul, scale and mask ops,
// Softmax (and the NaN guard after it), P V MatMul; with the rotary embedding, the grouped-query
// repeat of K/V, a KV-cache Concat and the head split/merge layout around it. One flash-attention
// kernel runs all of it, reading Q, K, V and the mask and writing O.
#include <algorithm>
#include <set>

#include "fusion/patterns.h"

namespace modelcost::fusion {
namespace {

constexpr int kMaxChain = 8;  // ops between a MatMul and the Softmax (scale, mask, casts, NaN guard)

bool is_product_of_activations(const FusionGraph& g, size_t i) {
  return g.kind(i) == OpKind::kMatrix && (g.op(i) == "MatMul" || g.op(i) == "Einsum") && !g.claimed(i) &&
         g.dynamic_inputs(i).size() >= 2;
}

bool chain_op(const FusionGraph& g, size_t i) {
  return !g.claimed(i) && (g.kind(i) == OpKind::kPointwise || g.kind(i) == OpKind::kLayout);
}

// Nodes on a path from `from` to `to` through `through` (both ends excluded).
std::vector<size_t> between(const FusionGraph& g, size_t from, size_t to, const std::set<size_t>& through) {
  std::set<size_t> forward = {from};
  for (size_t n : through)  // `through` is in topological order: one pass reaches every descendant
    for (int id : g.dynamic_inputs(n))
      if (g.producer(id) >= 0 && forward.count(size_t(g.producer(id)))) forward.insert(n);
  std::vector<size_t> out;
  std::set<size_t> backward = {to};
  for (auto it = through.rbegin(); it != through.rend(); ++it) {
    bool feeds = false;
    for (int id : g.node(*it).outputs)
      if (id >= 0)
        for (size_t c : g.consumers(id)) feeds = feeds || backward.count(c);
    if (feeds) backward.insert(*it);
    if (feeds && forward.count(*it)) out.push_back(*it);
  }
  return out;
}

std::vector<size_t> producers_of(const FusionGraph& g, size_t n) {
  std::vector<size_t> found;
  for (int id : g.dynamic_inputs(n))
    if (g.producer(id) >= 0) found.push_back(size_t(g.producer(id)));
  return found;
}

std::vector<size_t> readers_of(const FusionGraph& g, size_t n) {
  std::vector<size_t> found;
  for (int id : g.node(n).outputs)
    if (id >= 0) found.insert(found.end(), g.consumers(id).begin(), g.consumers(id).end());
  return found;
}

struct Product {
  size_t node = 0;
  std::vector<size_t> between;  // the chain ops between it and the Softmax
};

// The product of activations next to Softmax `s` through a few chain ops: upstream the Q K^T
// product (scale and mask ops between), downstream the P V product (casts, NaN guard, dropout).
std::optional<Product> find_product(const FusionGraph& g, size_t s, bool upstream) {
  std::set<size_t> seen;
  std::vector<size_t> frontier = {s};
  for (int depth = 0; depth < kMaxChain && !frontier.empty(); ++depth) {
    std::vector<size_t> next;
    for (size_t n : frontier)
      for (size_t m : upstream ? producers_of(g, n) : readers_of(g, n)) {
        if (seen.count(m)) continue;
        if (is_product_of_activations(g, m) && (upstream || g.node(m).inputs.front() != -1))
          return upstream ? Product{m, between(g, m, s, seen)} : Product{m, between(g, s, m, seen)};
        if (chain_op(g, m)) {
          seen.insert(m);
          next.push_back(m);
        }
      }
    frontier = next;
  }
  return std::nullopt;
}

// True where node n's value comes, through a few elementwise or layout ops, from a reduction: a
// normalisation of Q or K (XCiT's L2 norm over the tokens), which a generated row kernel runs.
bool fed_by_reduction(const FusionGraph& g, size_t n) {
  std::vector<size_t> frontier = {n};
  for (int depth = 0; depth < kMaxChain && !frontier.empty(); ++depth) {
    std::vector<size_t> next;
    for (size_t f : frontier)
      for (size_t p : producers_of(g, f)) {
        if (g.kind(p) == OpKind::kReduction) return true;
        if (g.kind(p) == OpKind::kPointwise || g.kind(p) == OpKind::kLayout) next.push_back(p);
      }
    frontier = next;
  }
  return false;
}

// A producer of the attention inputs that is part of the attention kernel: layout, rotary and
// repeat ops whose every reader is already in the group. A bias or scale applied right after a
// projection GEMM stays that GEMM's epilogue, a normalisation the row kernel that computes it.
bool joins_prologue(const FusionGraph& g, size_t p, const std::vector<size_t>& members) {
  if (!chain_op(g, p) || contains(members, p) || fed_by_reduction(g, p)) return false;
  for (int id : g.node(p).outputs)
    if (id >= 0) {
      if (g.is_graph_output(id)) return false;
      for (size_t c : g.consumers(id))
        if (!contains(members, c)) return false;
    }
  if (g.kind(p) == OpKind::kPointwise && g.dynamic_inputs(p).size() < g.node(p).inputs.size())
    for (int id : g.dynamic_inputs(p)) {
      const int q = g.producer(g.alias_root(id));
      if (q >= 0 && g.kind(size_t(q)) == OpKind::kMatrix) return false;
    }
  return true;
}

void absorb_prologue(const FusionGraph& g, std::vector<size_t>& members) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < members.size(); ++k)
      for (int id : g.dynamic_inputs(members[k])) {
        const int p = g.producer(id);
        if (p >= 0 && joins_prologue(g, size_t(p), members)) {
          members.push_back(size_t(p));
          changed = true;
        }
      }
  }
}

// The head merge after P V (Transpose, Reshape) writes O in its final layout.
void absorb_epilogue_layout(const FusionGraph& g, std::vector<size_t>& members, size_t last) {
  for (int guard = 0; guard < kMaxChain; ++guard) {
    const int out = g.node(last).outputs.empty() ? -1 : g.node(last).outputs.front();
    if (out < 0 || g.is_graph_output(out) || g.consumers(out).size() != 1) return;
    const size_t c = g.consumers(out).front();
    if (g.claimed(c) || g.kind(c) != OpKind::kLayout || g.dynamic_inputs(c).size() != 1) return;
    members.push_back(c);
    last = c;
  }
}

}  // namespace

std::optional<GroupCandidate> match_attention(const FusionGraph& g, size_t i) {
  if (g.op(i) != "Softmax" || g.claimed(i)) return std::nullopt;
  const auto scores = find_product(g, i, /*upstream=*/true);
  if (!scores) return std::nullopt;
  const auto values = find_product(g, i, /*upstream=*/false);
  if (!values || values->node == scores->node) return std::nullopt;
  std::vector<size_t> members = {scores->node, i, values->node};
  members.insert(members.end(), scores->between.begin(), scores->between.end());
  members.insert(members.end(), values->between.begin(), values->between.end());
  // Side inputs of the score chain built only for it (a per-layer mask Where) come along.
  absorb_prologue(g, members);
  absorb_epilogue_layout(g, members, values->node);
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  return GroupCandidate{members, i};
}

}  // namespace modelcost::fusion
