// Folding of the tensor family's data-movement ops on small known tensors, so that shape
// computations (Shape -> Gather -> Concat -> Reshape) resolve to concrete numbers.
// Each function does nothing when an input's contents are unknown or the output is large.
#pragma once
#include "ops/op_context.h"

namespace modelcost {

struct SliceSpec {
  std::vector<int64_t> start, step;  // per axis, already clamped
  Shape out;
};

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
