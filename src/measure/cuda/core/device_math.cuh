// Device math helpers for the expressions of elementwise_ops.h, shared by the elementwise
// kernels and the fused pointwise chains, so both compute every op the same way.
#pragma once
#include <cuda_runtime.h>

#include "core/device_math_list.h"
#include "ops/elementwise_ops.h"

namespace modelcost::cuda {

// The math helpers the expressions of elementwise_ops.h use (device_math_list.h).
namespace device_math {
#define MC_DEVICE_MATH_DEFINE(type, name, params, body) \
  __device__ __forceinline__ type name params { return body; }
MC_DEVICE_MATH(MC_DEVICE_MATH_DEFINE)
#undef MC_DEVICE_MATH_DEFINE
}  // namespace device_math

// Evaluates any op of elementwise_ops.h on float operands (b, c unused by unary ops).
#define MC_DEVICE_MATH_CASE(name, onnx, flops, expr) \
  case ElementwiseOp::k##name: return expr;
__device__ __forceinline__ float evaluate_elementwise(ElementwiseOp op, float a, float b, float c, float alpha, float beta) {
  using namespace device_math;
  using F = float;
  switch (op) {
    MC_UNARY_OPS(MC_DEVICE_MATH_CASE)
    MC_BINARY_OPS(MC_DEVICE_MATH_CASE)
    MC_TERNARY_OPS(MC_DEVICE_MATH_CASE)
  }
  return a;
}
#undef MC_DEVICE_MATH_CASE

}  // namespace modelcost::cuda
