// What the row kernels share (norm_kernels.cu, layer_norm_kernels.cu): warp reductions, the
// one-warp-per-row layout and 16-byte vectors of elements.
#pragma once
#include <cstdint>

#include "core/element_types.cuh"

namespace modelcost::cuda {

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_min(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_product(float v) {
  for (int o = 16; o > 0; o >>= 1) v *= __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

constexpr int kWarpsPerBlock = 8;

// The row of this thread's warp where one warp owns a row (kWarpsPerBlock rows a block), and
// the thread's lane in it.
struct WarpRow {
  int64_t row;
  int lane;
};
__device__ __forceinline__ WarpRow warp_row() {
  return {blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32, static_cast<int>(threadIdx.x % 32)};
}

inline int row_blocks(int64_t rows) { return grid_for(rows, kWarpsPerBlock); }

template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

}  // namespace modelcost::cuda
