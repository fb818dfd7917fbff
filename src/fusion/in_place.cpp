// The in_place pattern: a Slice, Split or Concat (any op whose measurement plan is a list of
// block copies) that a runtime runs as no kernel at all. Where every copy moves one contiguous
// block, a Slice's or Split's outputs are views at offsets into its input, and a Concat's inputs
// can be written by their producers straight into their places in the output, as TensorRT
// eliminates a concatenation. Offsets are kept to multiples of 128 elements (256 bytes at two
// bytes an element) so that every kernel reading or writing a held tensor finds the alignment of
// a buffer of its own.
#include <algorithm>

#include "fusion/patterns.h"
#include "ops/op_context.h"
#include "ops/op_registry.h"

namespace modelcost::fusion {
namespace {

constexpr int64_t kAlignedElements = 128;

std::optional<CopyPlan> copy_plan_of(const Graph& graph, const Node& node) {
  const OpRule* rule = OpRegistry::instance().find(node.domain, node.op_type);
  if (!rule || !rule->measure.plan) return std::nullopt;
  try {
    Diagnostics ignored;
    OpPlan plan = rule->measure.plan(OpContext::reading(graph, node, ignored));
    if (auto* copies = std::get_if<CopyPlan>(&plan)) return std::move(*copies);
  } catch (const std::exception&) {  // a value the plan needs is not known: not a block copy
  }
  return std::nullopt;
}

// One contiguous run of elements on both sides.
bool moves_one_block(StridedCopy copy) {
  copy.merge_dims();
  int runs = 0;
  for (size_t d = 0; d < copy.dims.size(); ++d) {
    if (copy.dims[d] == 1) continue;
    if (copy.src_strides[d] != 1 || copy.dst_strides[d] != 1) return false;
    ++runs;
  }
  return runs <= 1;
}

}  // namespace

// The held tensors of a node's block copies: its outputs inside its first input (views), or its
// inputs inside its one output (placed); empty where the copies are not blocks at aligned offsets
// covering whole tensors.
std::vector<HeldWithin> block_copies(const Graph& graph, const Node& node) {
  const std::optional<CopyPlan> plan = copy_plan_of(graph, node);
  if (!plan || plan->fill_output || plan->copies.empty() || node.inputs.empty() || node.inputs[0] < 0) return {};
  auto whole = [&](int id, const StridedCopy& c) { return id >= 0 && c.elements() == element_count(graph.tensors[id].shape); };
  std::vector<HeldWithin> views, placed;
  for (const StridedCopy& c : plan->copies) {
    if (!moves_one_block(c)) return {};
    const int in = node.inputs.at(static_cast<size_t>(c.input)), out = node.outputs.at(static_cast<size_t>(c.output));
    if (c.input == 0 && whole(out, c) && c.src_offset % kAlignedElements == 0) views.push_back({out, in, c.src_offset});
    if (c.output == 0 && whole(in, c) && c.dst_offset % kAlignedElements == 0) placed.push_back({in, out, c.dst_offset});
  }
  const size_t copies = plan->copies.size();
  if (views.size() == copies) return views;
  if (placed.size() == copies) return placed;
  return {};
}

namespace {

// A Concat's input can be written in place by its producer: a kernel that writes a buffer of its
// own (not a view of another tensor, nor a layout move that folds into its reader, nor already
// held elsewhere), read by this Concat once.
bool producer_can_place(const FusionGraph& g, const Node& node, int id) {
  const int p = g.producer(id);
  if (p < 0 || g.is_alias(size_t(p)) || g.traits(size_t(p)).folds_into_operand() || g.held(id) || g.is_graph_output(id))
    return false;
  return std::count(node.inputs.begin(), node.inputs.end(), id) == 1;
}

}  // namespace

std::vector<HeldWithin> held_tensors(const FusionGraph& g, size_t i) {
  const Node& node = g.node(i);
  if (g.traits(i).form != OpForm::kLayout || g.traits(i).folds_into_operand() || g.is_idle(i)) return {};
  std::vector<HeldWithin> held = block_copies(g.graph(), node);
  for (const HeldWithin& h : held) {
    const bool view = h.within == node.inputs[0];  // a Slice's or Split's output: nothing to check
    if (!view && !producer_can_place(g, node, h.tensor)) return {};
  }
  return held;
}

void mark_held_tensors(FusionGraph& g, size_t anchor) {
  for (const HeldWithin& held : held_tensors(g, anchor)) g.mark_held(held.tensor);
}

std::optional<GroupCandidate> match_in_place(const FusionGraph& g, size_t i) {
  if (held_tensors(g, i).empty()) return std::nullopt;
  return GroupCandidate{{i}, i};
}

// Runs no kernel: reads and writes nothing.
void in_place_cost(const FusionGraph& g, FusedGroup& group) {
  boundary_cost(g, group);
  group.macs = group.flops = 0;
  group.bytes_read = group.bytes_written = 0;
  group.launches = false;
}

std::string in_place_label(const FusionGraph& g, const FusedGroup& group) { return op_label(g, group) + " in place"; }

}  // namespace modelcost::fusion

namespace modelcost {

std::vector<HeldWithin> held_within(const FusedGroup& group, const Analysis& analysis) {
  if (group.pattern != "in_place" || group.members.size() != 1) return {};
  const NodeAnalysis& na = analysis.nodes[group.members.front()];
  return fusion::block_copies(*na.graph, *na.node);
}

}  // namespace modelcost
