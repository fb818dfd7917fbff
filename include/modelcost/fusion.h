// The fusion stage: groups the nodes of an analysis into the kernels a deployment runtime runs
// (conv/GEMM epilogues, pointwise chains, norms, flash attention). Patterns and formulas are in
// docs/fusion.md. The analysis is not changed; fuse() returns new data beside it.
#pragma once
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/kernel_plan.h"

namespace modelcost {

// How much of a group's epilogue its library call leaves to a kernel after it.
enum class LibraryTail { kNone, kWhereUnaligned, kAlways };

struct FusedGroup {
  size_t id = 0;
  std::string pattern;  // the pattern table row that made it: "attention", "epilogue", "norm", ...
  std::string label;    // what it computes: "conv+bias+relu+add", "layer_norm", "attention", ...
  std::vector<size_t> members;  // indices into Analysis::nodes, in topological order
  size_t anchor = 0;            // the member that names the group (the matrix op, the Softmax, ...)
  double macs = 0, flops = 0;
  // Bytes crossing the group boundary: its external inputs, each read once, and the outputs some
  // node outside the group (or the graph's output) reads; tensors that live only inside are free.
  double bytes_read = 0, bytes_written = 0;
  std::vector<int> inputs, outputs;  // boundary tensor ids (top-level graph), for the --dtype recast
  bool costed = true;    // every member's cost is known
  bool launches = true;  // runs a kernel (false: only folded or reinterpreting nodes)
  bool matrix = false;   // a member is a matrix op: the group runs on the tensor path
  KernelShape kernel;    // the class of kernel it runs as, and the shape its time depends on
  // Set on the kernels of a pattern match the deployed runtime cannot run as one kernel: why its
  // members are planned (and run) as kernels of their own.
  std::string apart_reason;
  // A conv or matrix product whose library call cannot take all of the group's epilogue (a SiLU,
  // HardSwish or scale after it, any activation of a grouped conv): the members it leaves run as
  // a generated chain kernel after it, so the group launches two kernels.
  bool library_tail = false;
  // The library call takes the epilogue (cuBLASLt's GELU) only where the product's operand rows are
  // 16-byte aligned (tile_aligned at the deployed dtype); elsewhere it runs it as a second kernel.
  bool tail_where_unaligned = false;
  double bytes() const { return bytes_read + bytes_written; }
  double arithmetic_intensity() const { return bytes() > 0 ? flops / bytes() : 0; }
};

// Whether the group launches a kernel after its library call when it runs at `element_bytes` per
// element: always for a library_tail, on unaligned operands for a tail_where_unaligned.
bool runs_library_tail(const FusedGroup& group, double element_bytes);

struct FusionPlan {
  std::vector<FusedGroup> groups;  // in the order their first member runs
  std::vector<int> group_of;       // per node of the analysis: its group id, -1 for none (folded constants)
  size_t kernels() const;          // groups that launch
};

// Every output's contents are known at analysis time (Constant, folded shape arithmetic): a
// runtime folds the node too, so it runs no kernel.
bool outputs_known(const NodeAnalysis& node);

// The kernel a group runs as: an attention group is one flash-attention kernel (K = the key
// length); a group with a matrix member is its anchor's GEMM or convolution; any other group is
// the heaviest work among its members (a norm over a reduction over pooling over pointwise work).
KernelShape group_kernel(const FusedGroup& group, const Analysis& analysis);

// The tensors a "sibling_products" group writes, one per product in member order (the bias Add's
// result where the product has one); empty for any other group. Its batched call writes them
// side by side, so a runtime places them in one buffer in this order.
std::vector<int> sibling_outputs(const FusedGroup& group, const Analysis& analysis);

// A tensor an "in_place" group keeps inside another tensor's buffer instead of copying it: a
// Slice's or Split's output that is a contiguous run of its input (`within` the input), or a
// Concat's input that its producer writes straight into its place in the output (`within` the
// output). The runtime places `tensor` at `element_offset` elements into `within`'s buffer.
struct HeldWithin {
  int tensor = -1, within = -1;
  int64_t element_offset = 0;
};
// The tensors an "in_place" group holds that way; empty for any other group.
std::vector<HeldWithin> held_within(const FusedGroup& group, const Analysis& analysis);

// Whether a factor of shape `factor`, broadcast against `result` (dims aligned to the right), holds
// one value per entry of `result`'s axis `channel_axis`, or one value in all: a per-channel scale,
// which the plan's library epilogue (and the runtime) folds into a product's constant weight.
bool per_channel_factor(const Shape& factor, const Shape& result, size_t channel_axis);

// Which fusions the plan holds. kMeasuredRuntime: the kernels the deployed runtime of --measure
// launches, so a pattern match it cannot run as one kernel (a reduction with its prologue, an
// attention head size its kernel lacks) is planned as its members. kEveryPattern: every pattern
// match as one kernel, as a fully fusing runtime (vLLM, TensorRT) would run it.
enum class FusionReach { kMeasuredRuntime, kEveryPattern };

// Groups every top-level node of `analysis`. Nodes that run nothing (folded shape arithmetic,
// Constant) belong to no group; every other node belongs to exactly one.
FusionPlan fuse(const Analysis& analysis, FusionReach reach = FusionReach::kMeasuredRuntime);

// The names of the pattern table's rows, in the order they are tried.
std::vector<std::string> fusion_pattern_names();

}  // namespace modelcost
