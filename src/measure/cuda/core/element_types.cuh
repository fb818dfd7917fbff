// Float conversions of the element types the kernels are instantiated for.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace modelcost::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// W elements loaded or stored at once: a 16-byte vector for W * sizeof(T) == 16, or narrower.
template <typename T, int W>
struct alignas(sizeof(T) * W) Pack {
  T v[W];
};

// Runs body<T>() for the element type.
#define MC_DISPATCH_TYPE(type, ...)                                               \
  switch (type) {                                                                 \
    case ElementType::kFloat32: { using T = float; __VA_ARGS__; break; }          \
    case ElementType::kFloat16: { using T = __half; __VA_ARGS__; break; }         \
    case ElementType::kBFloat16: { using T = __nv_bfloat16; __VA_ARGS__; break; } \
  }

constexpr int kThreads = 256;

inline int grid_for(int64_t work, int threads = kThreads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > (1 << 30) ? (1 << 30) : blocks));
}

// Grid-stride data movement: at most 16 blocks of kThreads per SM of an H100 (132 SMs), each
// thread looping over the rest.
inline int capped_grid(int64_t work) { return grid_for(work) > 132 * 16 ? 132 * 16 : grid_for(work); }

}  // namespace modelcost::cuda
