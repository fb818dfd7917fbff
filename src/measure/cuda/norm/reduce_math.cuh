// The arithmetic of a reduction's op (ReduceOp): its start, one element folded in, the result,
// and partials of a warp combined. Shared by the row and the column kernels.
#pragma once
#include <cfloat>

#include "core/element_types.cuh"
#include "norm/row_kernels.cuh"
#include "ops/measured_kinds.h"

namespace modelcost::cuda {

__device__ __forceinline__ float reduce_init(ReduceOp op) {
  return op == ReduceOp::kMax ? -FLT_MAX : op == ReduceOp::kMin ? FLT_MAX : op == ReduceOp::kProd ? 1.f : 0.f;
}
__device__ __forceinline__ float reduce_step(ReduceOp op, float acc, float v, float peak) {
  switch (op) {
    case ReduceOp::kMax: return fmaxf(acc, v);
    case ReduceOp::kMin: return fminf(acc, v);
    case ReduceOp::kSumSquare: case ReduceOp::kL2: return acc + v * v;
    case ReduceOp::kL1: return acc + fabsf(v);
    case ReduceOp::kLogSumExp: return acc + __expf(v - peak);
    case ReduceOp::kProd: return acc * v;
    default: return acc + v;
  }
}
__device__ __forceinline__ float reduce_finish(ReduceOp op, float acc, int64_t n, float peak) {
  if (op == ReduceOp::kMean) return acc / static_cast<float>(n);
  if (op == ReduceOp::kL2) return sqrtf(acc);
  if (op == ReduceOp::kLogSum) return __logf(acc);
  if (op == ReduceOp::kLogSumExp) return peak + __logf(acc);
  return acc;
}
__device__ __forceinline__ float warp_combine(ReduceOp op, float v) {
  return op == ReduceOp::kMax ? warp_max(v) : op == ReduceOp::kMin ? warp_min(v) : op == ReduceOp::kProd ? warp_product(v) : warp_sum(v);
}

}  // namespace modelcost::cuda
