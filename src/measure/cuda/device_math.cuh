// Device math helpers for the expressions of elementwise_ops.h, shared by the elementwise
// kernels and the fused pointwise chains, so both compute every op the same way.
#pragma once
#include <cuda_runtime.h>

#include "ops/elementwise_ops.h"

namespace modelcost::cuda {

// The math helpers the expressions of elementwise_ops.h use, in float (fast intrinsics where
// PyTorch's kernels use them too).
namespace device_math {
__device__ __forceinline__ float exp_(float x) { return __expf(x); }
__device__ __forceinline__ float log_(float x) { return __logf(x); }
__device__ __forceinline__ float log1p_(float x) { return log1pf(x); }
__device__ __forceinline__ float erf_(float x) { return erff(x); }
__device__ __forceinline__ float tanh_(float x) { return tanhf(x); }
__device__ __forceinline__ float sqrt_(float x) { return sqrtf(x); }
__device__ __forceinline__ float fabs_(float x) { return fabsf(x); }
__device__ __forceinline__ float floor_(float x) { return floorf(x); }
__device__ __forceinline__ float ceil_(float x) { return ceilf(x); }
__device__ __forceinline__ float rint_(float x) { return rintf(x); }
__device__ __forceinline__ float sin_(float x) { return sinf(x); }
__device__ __forceinline__ float cos_(float x) { return cosf(x); }
__device__ __forceinline__ float tan_(float x) { return tanf(x); }
__device__ __forceinline__ float asin_(float x) { return asinf(x); }
__device__ __forceinline__ float acos_(float x) { return acosf(x); }
__device__ __forceinline__ float atan_(float x) { return atanf(x); }
__device__ __forceinline__ float sinh_(float x) { return sinhf(x); }
__device__ __forceinline__ float cosh_(float x) { return coshf(x); }
__device__ __forceinline__ float asinh_(float x) { return asinhf(x); }
__device__ __forceinline__ float acosh_(float x) { return acoshf(x); }
__device__ __forceinline__ float atanh_(float x) { return atanhf(x); }
__device__ __forceinline__ float pow_(float x, float y) { return powf(x, y); }
__device__ __forceinline__ float fmod_(float x, float y) { return fmodf(x, y); }
__device__ __forceinline__ float clamp_(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
__device__ __forceinline__ long long int_(float x) { return static_cast<long long>(x); }
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
