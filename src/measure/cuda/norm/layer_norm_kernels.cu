// LayerNormalization over the last axis: rows of up to 16 16-byte vectors (128 fp16 channels) on
// as many lanes as they have vectors, several rows a warp; one warp per row holding it in
// registers (up to 256 vectors); one block per row for wider rows (up to 2048 vectors: albert's
// 4096); a lane-strided scalar loop where the row is not whole vectors.
#include "core/block_reduce.cuh"
#include "core/cuda_check.h"
#include "core/index_math.cuh"
#include "core/element_types.cuh"
#include "core/kernels.h"
#include "norm/row_kernels.cuh"

namespace modelcost::cuda {
namespace {

template <typename T>
__global__ void layer_norm_kernel(const T* x, const T* scale, const T* bias, T* y, int64_t rows, int64_t n, float eps) {
  const auto [row, lane] = warp_row();
  if (row >= rows) return;
  const T* p = x + row * n;
  T* q = y + row * n;
  float s = 0.f;
  for (int64_t j = lane; j < n; j += 32) s += to_float(p[j]);
  const float mean = warp_sum(s) / static_cast<float>(n);
  float v = 0.f;
  for (int64_t j = lane; j < n; j += 32) {
    const float d = to_float(p[j]) - mean;
    v += d * d;
  }
  const float inv = rsqrtf(warp_sum(v) / static_cast<float>(n) + eps);
  for (int64_t j = lane; j < n; j += 32) {
    float r = (to_float(p[j]) - mean) * inv;
    if (scale) r *= to_float(scale[j]);
    if (bias) r += to_float(bias[j]);
    q[j] = from_float<T>(r);
  }
}

// One row of n elements in 16-byte vectors, held in registers: this thread's vectors are
// first, first + kStride, ... (kVec of them at most); row_sum adds a value over the threads that
// share the row. Mean, then variance around it from the registers, then one write.
template <typename T, int kVec, int kStride, typename RowSum>
__device__ __forceinline__ void layer_norm_held_row(const T* __restrict__ x, const T* __restrict__ scale,
                                                    const T* __restrict__ bias, T* __restrict__ y, int n, int first,
                                                    float eps, RowSum row_sum) {
  constexpr int W = Vec16<T>::kSize;
  const int vectors = n / W;
  const Vec16<T>* p = reinterpret_cast<const Vec16<T>*>(x);
  Vec16<T>* q = reinterpret_cast<Vec16<T>*>(y);
  float v[kVec][W];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const int j = first + kStride * k;
    Vec16<T> in;
    if (j < vectors) in = p[j];
#pragma unroll
    for (int e = 0; e < W; ++e) {
      v[k][e] = j < vectors ? to_float(in.v[e]) : 0.f;
      s += v[k][e];
    }
  }
  const float mean = row_sum(s) / static_cast<float>(n);
  float var = 0.f;
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    if (first + kStride * k < vectors)
#pragma unroll
      for (int e = 0; e < W; ++e) var += (v[k][e] - mean) * (v[k][e] - mean);
  const float inv = rsqrtf(row_sum(var) / static_cast<float>(n) + eps);
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const int j = first + kStride * k;
    if (j >= vectors) continue;
    Vec16<T> g, b, out;
    if (scale) g = reinterpret_cast<const Vec16<T>*>(scale)[j];
    if (bias) b = reinterpret_cast<const Vec16<T>*>(bias)[j];
#pragma unroll
    for (int e = 0; e < W; ++e) {
      float r = (v[k][e] - mean) * inv;
      if (scale) r *= to_float(g.v[e]);
      if (bias) r += to_float(b.v[e]);
      out.v[e] = from_float<T>(r);
    }
    q[j] = out;
  }
}

// Layer norm of rows of kVec * 32 16-byte vectors at most: one warp per row.
template <typename T, int kVec>
__global__ void layer_norm_vector_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                         T* __restrict__ y, int64_t rows, int n, float eps) {
  const auto [row, lane] = warp_row();
  if (row >= rows) return;
  layer_norm_held_row<T, kVec, 32>(x + row * n, scale, bias, y + row * n, n, lane, eps, [](float v) { return warp_sum(v); });
}

// Layer norm of rows of at most kLanes 16-byte vectors (a hierarchical transformer's first stages:
// 32 to 128 channels), kLanes lanes a row and 32 / kLanes rows a warp, so no lane idles as most
// of a warp would over one short row. Every lane takes part in the shuffles: a lane past the last
// row recomputes the last row and stores what its owner stores.
template <typename T, int kLanes>
__global__ void layer_norm_sub_warp_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                           T* __restrict__ y, int64_t rows, int n, float eps) {
  const auto [warp, lane] = warp_row();
  const int64_t own = warp * (32 / kLanes) + lane / kLanes, row = own < rows ? own : rows - 1;
  layer_norm_held_row<T, 1, kLanes>(x + row * n, scale, bias, y + row * n, n, lane % kLanes, eps, [](float v) {
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
  });
}

constexpr int kRowBlockThreads = 256;

// Layer norm of rows wider than a warp holds: one block per row, kVec vectors a thread, the sums
// over the block.
template <typename T, int kVec>
__global__ void __launch_bounds__(kRowBlockThreads)
    layer_norm_block_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                            T* __restrict__ y, int n, float eps) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  layer_norm_held_row<T, kVec, kRowBlockThreads>(x + row * n, scale, bias, y + row * n, n, threadIdx.x, eps,
                                                 [&](float v) { return block_sum(v, scratch); });
}

}  // namespace

namespace {

// One warp per row holding up to 8 vectors a lane, else one block per row holding up to 8 a
// thread; false where the row is not whole aligned vectors or is wider still.
template <typename T>
bool launch_vector_rows(const T* x, const T* scale, const T* bias, T* y, int64_t rows, int64_t cols, float eps,
                        cudaStream_t stream) {
  constexpr int W = Vec16<T>::kSize;
  auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  const int64_t vectors = cols / W;
  if (cols % W || vectors > kRowBlockThreads * 8 || !aligned(x) || !aligned(y) || (scale && !aligned(scale)) ||
      (bias && !aligned(bias)))
    return false;
  const int n = static_cast<int>(cols);
  if (vectors <= 16) {
    const int per_warp = vectors <= 2 ? 16 : vectors <= 4 ? 8 : vectors <= 8 ? 4 : 2;  // rows a warp
    const int blocks = row_blocks((rows + per_warp - 1) / per_warp), threads = 32 * kWarpsPerBlock;
    if (per_warp == 16) layer_norm_sub_warp_kernel<T, 2><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_warp == 8) layer_norm_sub_warp_kernel<T, 4><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_warp == 4) layer_norm_sub_warp_kernel<T, 8><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else layer_norm_sub_warp_kernel<T, 16><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    return true;
  }
  if (vectors <= 32 * 8) {
    const int blocks = row_blocks(rows), threads = 32 * kWarpsPerBlock;
    const int per_lane = static_cast<int>((vectors + 31) / 32);
    if (per_lane <= 1) layer_norm_vector_kernel<T, 1><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_lane <= 2) layer_norm_vector_kernel<T, 2><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_lane <= 3) layer_norm_vector_kernel<T, 3><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_lane <= 4) layer_norm_vector_kernel<T, 4><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else if (per_lane <= 6) layer_norm_vector_kernel<T, 6><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    else layer_norm_vector_kernel<T, 8><<<blocks, threads, 0, stream>>>(x, scale, bias, y, rows, n, eps);
    return true;
  }
  if (!fits_int32(rows)) return false;
  const dim3 grid(static_cast<unsigned>(rows));
  const int per_thread = static_cast<int>((vectors + kRowBlockThreads - 1) / kRowBlockThreads);
  if (per_thread <= 2) layer_norm_block_kernel<T, 2><<<grid, kRowBlockThreads, 0, stream>>>(x, scale, bias, y, n, eps);
  else if (per_thread <= 4) layer_norm_block_kernel<T, 4><<<grid, kRowBlockThreads, 0, stream>>>(x, scale, bias, y, n, eps);
  else layer_norm_block_kernel<T, 8><<<grid, kRowBlockThreads, 0, stream>>>(x, scale, bias, y, n, eps);
  return true;
}

}  // namespace

void launch_layer_norm(ElementType type, const LayerNormPlan& plan, const NormOperands& operands, cudaStream_t stream) {
  const int64_t rows = plan.outer, cols = plan.axis_len;
  const float epsilon = static_cast<float>(plan.epsilon);
  if (rows == 0) return;
  MC_DISPATCH_TYPE(type, {
    const T* x = static_cast<const T*>(operands.x);
    const T* scale = static_cast<const T*>(operands.scale);
    const T* bias = static_cast<const T*>(operands.bias);
    T* y = static_cast<T*>(operands.y);
    if (!launch_vector_rows(x, scale, bias, y, rows, cols, epsilon, stream))
      layer_norm_kernel<T><<<row_blocks(rows), 32 * kWarpsPerBlock, 0, stream>>>(x, scale, bias, y, rows, cols, epsilon);
  });
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
