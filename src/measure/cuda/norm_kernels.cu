// Row operations over a [outer, n, inner] view: reductions, softmax and layer norm. With
// inner == 1 one warp owns a row (coalesced along n); otherwise one thread owns an (outer, inner)
// column and walks n, coalesced along inner.
#include <cfloat>

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/element_types.cuh"
#include "measure/cuda/kernels.h"

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

__device__ __forceinline__ float reduce_init(ReduceOp op) {
  return op == ReduceOp::kMax ? -FLT_MAX : op == ReduceOp::kMin ? FLT_MAX : 0.f;
}
__device__ __forceinline__ float reduce_step(ReduceOp op, float acc, float v, float peak) {
  switch (op) {
    case ReduceOp::kMax: return fmaxf(acc, v);
    case ReduceOp::kMin: return fminf(acc, v);
    case ReduceOp::kSumSquare: case ReduceOp::kL2: return acc + v * v;
    case ReduceOp::kL1: return acc + fabsf(v);
    case ReduceOp::kLogSumExp: return acc + __expf(v - peak);
    default: return acc + v;
  }
}
__device__ __forceinline__ float reduce_finish(ReduceOp op, float acc, int64_t n, float peak) {
  if (op == ReduceOp::kMean) return acc / static_cast<float>(n);
  if (op == ReduceOp::kL2) return sqrtf(acc);
  if (op == ReduceOp::kLogSumExp) return peak + __logf(acc);
  return acc;
}
__device__ __forceinline__ float warp_combine(ReduceOp op, float v) {
  return op == ReduceOp::kMax ? warp_max(v) : op == ReduceOp::kMin ? warp_min(v) : warp_sum(v);
}

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void reduce_rows_kernel(ReduceOp op, const T* x, T* y, int64_t rows, int64_t n) {
  const int64_t row = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* p = x + row * n;
  float peak = 0.f;
  if (op == ReduceOp::kLogSumExp) {
    float m = -FLT_MAX;
    for (int64_t j = lane; j < n; j += 32) m = fmaxf(m, to_float(p[j]));
    peak = warp_max(m);
  }
  float acc = reduce_init(op);
  for (int64_t j = lane; j < n; j += 32) acc = reduce_step(op, acc, to_float(p[j]), peak);
  acc = warp_combine(op == ReduceOp::kLogSumExp ? ReduceOp::kSum : op, acc);
  if (lane == 0) y[row] = from_float<T>(reduce_finish(op, acc, n, peak));
}

template <typename T>
__global__ void reduce_columns_kernel(ReduceOp op, const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, i = c % inner;
    const T* p = x + o * n * inner + i;
    float peak = 0.f;
    if (op == ReduceOp::kLogSumExp) {
      peak = -FLT_MAX;
      for (int64_t j = 0; j < n; ++j) peak = fmaxf(peak, to_float(p[j * inner]));
    }
    float acc = reduce_init(op);
    for (int64_t j = 0; j < n; ++j) acc = reduce_step(op, acc, to_float(p[j * inner]), peak);
    y[c] = from_float<T>(reduce_finish(op, acc, n, peak));
  }
}

template <typename T>
__global__ void softmax_rows_kernel(bool log_softmax, const T* x, T* y, int64_t rows, int64_t n) {
  const int64_t row = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* p = x + row * n;
  T* q = y + row * n;
  float m = -FLT_MAX;
  for (int64_t j = lane; j < n; j += 32) m = fmaxf(m, to_float(p[j]));
  m = warp_max(m);
  float s = 0.f;
  for (int64_t j = lane; j < n; j += 32) s += __expf(to_float(p[j]) - m);
  s = warp_sum(s);
  const float inv = 1.f / s, log_s = __logf(s);
  for (int64_t j = lane; j < n; j += 32) {
    const float v = to_float(p[j]) - m;
    q[j] = from_float<T>(log_softmax ? v - log_s : __expf(v) * inv);
  }
}

template <typename T>
__global__ void softmax_columns_kernel(bool log_softmax, const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, i = c % inner;
    const T* p = x + o * n * inner + i;
    T* q = y + o * n * inner + i;
    float m = -FLT_MAX, s = 0.f;
    for (int64_t j = 0; j < n; ++j) m = fmaxf(m, to_float(p[j * inner]));
    for (int64_t j = 0; j < n; ++j) s += __expf(to_float(p[j * inner]) - m);
    for (int64_t j = 0; j < n; ++j) {
      const float v = to_float(p[j * inner]) - m;
      q[j * inner] = from_float<T>(log_softmax ? v - __logf(s) : __expf(v) / s);
    }
  }
}

// One warp per row: mean, then variance around it (two passes over the row, the second from cache).
template <typename T>
__global__ void layer_norm_kernel(const T* x, const T* scale, const T* bias, T* y, int64_t rows, int64_t n, float eps) {
  const int64_t row = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
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

namespace {
int row_blocks(int64_t rows) { return grid_for(rows, kWarpsPerBlock); }
int column_grid(int64_t work) { return grid_for(work) > 132 * 16 ? 132 * 16 : grid_for(work); }
}  // namespace

void launch_reduce(ElementType type, ReduceOp op, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                   cudaStream_t stream) {
  if (outer * inner == 0) return;
  MC_DISPATCH_TYPE(type, {
    if (inner == 1)
      reduce_rows_kernel<T><<<row_blocks(outer), 32 * kWarpsPerBlock, 0, stream>>>(op, static_cast<const T*>(x),
                                                                                   static_cast<T*>(y), outer, n);
    else
      reduce_columns_kernel<T><<<column_grid(outer * inner), kThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner);
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_softmax(ElementType type, bool log_softmax, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                    cudaStream_t stream) {
  if (outer * inner == 0) return;
  MC_DISPATCH_TYPE(type, {
    if (inner == 1)
      softmax_rows_kernel<T><<<row_blocks(outer), 32 * kWarpsPerBlock, 0, stream>>>(
          log_softmax, static_cast<const T*>(x), static_cast<T*>(y), outer, n);
    else
      softmax_columns_kernel<T><<<column_grid(outer * inner), kThreads, 0, stream>>>(
          log_softmax, static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner);
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_layer_norm(ElementType type, const void* x, const void* scale, const void* bias, void* y, int64_t rows,
                       int64_t cols, float epsilon, cudaStream_t stream) {
  if (rows == 0) return;
  MC_DISPATCH_TYPE(type, layer_norm_kernel<T><<<row_blocks(rows), 32 * kWarpsPerBlock, 0, stream>>>(
                             static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
                             static_cast<T*>(y), rows, cols, epsilon));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
