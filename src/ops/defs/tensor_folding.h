// Shared by the tensor family files (tensor.cpp, tensor_folding.cpp, tensor_plans.cpp): the
// readers of Slice and Pad, folding of the data-movement ops on small known tensors, so that
// shape computations (Shape -> Gather -> Concat -> Reshape) resolve to concrete numbers (each
// fold does nothing when an input's contents are unknown or the output is large), and the
// measurement plans of tensor_plans.cpp.
#pragma once
#include "ops/measured_kinds.h"
#include "ops/op_context.h"

namespace modelcost {

struct SliceSpec {
  std::vector<int64_t> start, step;  // per axis, already clamped
  Shape out;
};

// Slice's starts, steps and output read from its attributes or inputs (every value checked).
SliceSpec read_slice(const OpContext& c);

struct PadSpec {
  std::vector<int64_t> begin, end;  // per axis of the input (0 where not padded); negative crops
  Shape out;
};
// Pad's amounts read from its attributes or inputs (every value checked).
PadSpec read_pad(const OpContext& c);

// tensor_plans.cpp: measured as strided copies.
OpPlan plan_transpose(const OpContext& c);
OpPlan plan_slice(const OpContext& c);
OpPlan plan_concat(const OpContext& c);
OpPlan plan_split(const OpContext& c);
OpPlan plan_expand(const OpContext& c);
OpPlan plan_pad(const OpContext& c);
OpPlan plan_tile(const OpContext& c);

void fold_concat(OpContext& c, int64_t axis);
void fold_slice(OpContext& c, const SliceSpec& spec);
// Output `output` = input 0's [offset, offset + length) along axis (Split).
void fold_slice_axis(OpContext& c, size_t output, int64_t axis, int64_t offset, int64_t length);
void fold_transpose(OpContext& c, const std::vector<int64_t>& perm);
// Output 0 = input 0 broadcast to output 0's shape (Expand).
void fold_broadcast_copy(OpContext& c);
void fold_tile(OpContext& c);
// Gather along axis with indices from input 1.
void fold_gather(OpContext& c, int64_t axis);
// Where(cond, x, y) with broadcasting.
void fold_where(OpContext& c);

}  // namespace modelcost
