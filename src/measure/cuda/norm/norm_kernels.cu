// Row operations over a [outer, n, inner] view: reductions and softmax (layer norm is in
// layer_norm_kernels.cu), and batch norm. With inner == 1 one warp owns a row (coalesced along
// n); otherwise the (outer, inner) columns are read coalesced along inner, a block's rows of
// threads splitting each column where n is long (column tiles; a cluster of blocks per tile where
// the tiles are fewer than the SMs) and one thread walking it where n is short.
#include <cfloat>

#include "core/cuda_check.h"
#include "core/device_info.h"
#include "core/element_types.cuh"
#include "core/index_math.cuh"
#include "core/kernels.h"
#include "norm/column_kernels.cuh"
#include "norm/reduce_math.cuh"
#include "norm/row_kernels.cuh"

namespace modelcost::cuda {

// The largest element of a row that one warp reads (each lane every 32nd element).
template <typename T>
__device__ __forceinline__ float warp_row_max(const T* p, int64_t n, int lane) {
  float m = -FLT_MAX;
  for (int64_t j = lane; j < n; j += 32) m = fmaxf(m, to_float(p[j]));
  return warp_max(m);
}

template <typename T>
__global__ void reduce_rows_kernel(ReduceOp op, const T* x, T* y, int64_t rows, int64_t n) {
  const auto [row, lane] = warp_row();
  if (row >= rows) return;
  const T* p = x + row * n;
  float peak = 0.f;
  if (op == ReduceOp::kLogSumExp) peak = warp_row_max(p, n, lane);
  float acc = reduce_init(op);
  for (int64_t j = lane; j < n; j += 32) acc = reduce_step(op, acc, to_float(p[j]), peak);
  acc = warp_combine(op == ReduceOp::kLogSumExp ? ReduceOp::kSum : op, acc);
  if (lane == 0) y[row] = from_float<T>(reduce_finish(op, acc, n, peak));
}

// Long rows (global pooling over a large image: a few rows of thousands of elements): a block
// per row, 16-byte loads where the rows allow them, warps combined through shared memory. A warp
// per row would leave most of the GPU idle and wait on one 2-byte load at a time.
constexpr int kRowBlockThreads = 256;

template <typename T>
__global__ void reduce_long_rows_kernel(ReduceOp op, const T* x, T* y, int64_t n, bool vectors) {
  constexpr int W = 16 / sizeof(T);
  struct alignas(16) Vector {
    T v[W];
  };
  const T* p = x + blockIdx.x * n;
  float acc = reduce_init(op);
  if (vectors) {
    const Vector* q = reinterpret_cast<const Vector*>(p);
    for (int64_t j = threadIdx.x; j < n / W; j += kRowBlockThreads) {
      const Vector v = q[j];
#pragma unroll
      for (int k = 0; k < W; ++k) acc = reduce_step(op, acc, to_float(v.v[k]), 0.f);
    }
  } else {
    for (int64_t j = threadIdx.x; j < n; j += kRowBlockThreads) acc = reduce_step(op, acc, to_float(p[j]), 0.f);
  }
  __shared__ float partial[kRowBlockThreads / 32];
  acc = warp_combine(op, acc);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  acc = warp_combine(op, threadIdx.x < kRowBlockThreads / 32 ? partial[threadIdx.x] : reduce_init(op));
  if (threadIdx.x == 0) y[blockIdx.x] = from_float<T>(reduce_finish(op, acc, n, 0.f));
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
  const auto [row, lane] = warp_row();
  if (row >= rows) return;
  const T* p = x + row * n;
  T* q = y + row * n;
  const float m = warp_row_max(p, n, lane);
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
// Softmax of rows of at most 32 * kPerLane elements: one warp per row, the row read once into
// registers (lane-strided, coalesced), max and sum by shuffles, one write.
template <typename T, int kPerLane>
__global__ void softmax_rows_cached_kernel(bool log_softmax, const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                           int n) {
  const auto [row, lane] = warp_row();
  if (row >= rows) return;
  const T* p = x + row * n;
  T* q = y + row * n;
  float v[kPerLane];
  float m = -FLT_MAX;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int j = lane + 32 * k;
    v[k] = j < n ? to_float(p[j]) : -FLT_MAX;
    m = fmaxf(m, v[k]);
  }
  m = warp_max(m);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int j = lane + 32 * k;
    v[k] -= m;
    if (j < n) s += __expf(v[k]);
  }
  s = warp_sum(s);
  const float inv = 1.f / s, log_s = __logf(s);
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int j = lane + 32 * k;
    if (j < n) q[j] = from_float<T>(log_softmax ? v[k] - log_s : __expf(v[k]) * inv);
  }
}

// Inference batch norm: y = (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + bias[c].
template <typename T>
__global__ void batch_norm_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                  const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y,
                                  FastDivider inner, FastDivider channels, uint32_t n, float eps) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t plane = inner.div(i);
    const uint32_t c = plane - channels.div(plane) * channels.divisor;
    const float a = to_float(scale[c]) * rsqrtf(to_float(var[c]) + eps);
    y[i] = from_float<T>((to_float(x[i]) - to_float(mean[c])) * a + to_float(bias[c]));
  }
}

// The same over 16-byte vectors, where a vector's elements share one channel (a plane of a
// multiple of the vector's length) or run over consecutive channels (channels innermost): loads
// and stores run at the memory rate instead of 2-byte accesses at half of it.
template <typename T, bool kChannelsInner>
__global__ void batch_norm_vector_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                         const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y,
                                         FastDivider inner, FastDivider channels, uint32_t vectors, float eps) {
  constexpr int W = 16 / sizeof(T);
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += gridDim.x * blockDim.x) {
    const uint32_t i = v * W, plane = inner.div(i);
    const uint32_t c0 = plane - channels.div(plane) * channels.divisor;
    const Pack<T, W> in = reinterpret_cast<const Pack<T, W>*>(x)[v];
    Pack<T, W> out;
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const uint32_t c = kChannelsInner ? c0 + e : c0;
      const float a = to_float(scale[c]) * rsqrtf(to_float(var[c]) + eps);
      out.v[e] = from_float<T>((to_float(in.v[e]) - to_float(mean[c])) * a + to_float(bias[c]));
    }
    reinterpret_cast<Pack<T, W>*>(y)[v] = out;
  }
}

namespace {
int column_grid(int64_t work) { return grid_for(work) > 132 * 16 ? 132 * 16 : grid_for(work); }
// Columns this long split their rows over a block's threads (column tiles); shorter ones take a
// thread each.
constexpr int64_t kSplitColumnsFrom = 32;
int column_tile_width(int64_t inner) {
  int width = 1;
  while (width < 32 && width < inner) width *= 2;
  return width;
}
int64_t column_tiles(int64_t outer, int64_t inner) {
  return outer * ((inner + column_tile_width(inner) - 1) / column_tile_width(inner));
}
int column_tile_grid(int64_t outer, int64_t inner) {
  const int64_t tiles = column_tiles(outer, inner);
  return static_cast<int>(tiles < 132 * 16 ? tiles : 132 * 16);
}
// Fewer tiles than SMs (CoaT's softmax over 3137 tokens of 8 heads of 8 channels: 8 tiles) leave
// most of the GPU idle and each thread a long serial walk: such tiles take 1024 threads each.
constexpr int kWideColumnThreads = 1024;
bool few_column_tiles(int64_t outer, int64_t inner) { return column_tiles(outer, inner) < 132; }

// A cluster of kColumnCluster blocks per column tile (the device must have clusters).
template <typename Kernel, typename... Args>
void launch_column_clusters(Kernel kernel, int64_t outer, int64_t inner, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(column_tiles(outer, inner) * kColumnCluster));
  config.blockDim = dim3(kWideColumnThreads);
  config.stream = stream;
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kColumnCluster;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  MC_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}
// A cluster pays two cluster barriers and its launch: worth it where each of its blocks still has
// a long slice of n (CoaT: 8.2 -> 6.9 us at 785 tokens, 10.3 us against 4.3 alone at 50).
constexpr int64_t kClusterColumnsFrom = 512;
bool cluster_columns(int64_t outer, int64_t n, int64_t inner) {
  return n >= kClusterColumnsFrom && few_column_tiles(outer, inner) && current_device_has_clusters();
}
bool merges_partials(ReduceOp op) {
  return op != ReduceOp::kLogSumExp && op != ReduceOp::kArgMax && op != ReduceOp::kArgMin;
}
}  // namespace

void launch_reduce(ElementType type, const ReducePlan& plan, const void* x, void* y, cudaStream_t stream) {
  const ReduceOp op = plan.op;
  const int64_t outer = plan.outer, n = plan.axis_len, inner = plan.inner;
  if (outer * inner == 0) return;
  MC_DISPATCH_TYPE(type, {
    constexpr int kWide = 16 / sizeof(T);
    if (inner == 1 && n >= 1024 && op != ReduceOp::kLogSumExp && outer < (int64_t(1) << 31))
      reduce_long_rows_kernel<T><<<static_cast<int>(outer), kRowBlockThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), n,
          n % kWide == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0);
    else if (inner == 1)
      reduce_rows_kernel<T><<<row_blocks(outer), 32 * kWarpsPerBlock, 0, stream>>>(op, static_cast<const T*>(x),
                                                                                   static_cast<T*>(y), outer, n);
    else if (cluster_columns(outer, n, inner) && merges_partials(op))
      launch_column_clusters(reduce_column_cluster_kernel<T, kWideColumnThreads>, outer, inner, stream, op,
                             static_cast<const T*>(x), static_cast<T*>(y), n, inner, column_tile_width(inner));
    else if (n >= kSplitColumnsFrom && few_column_tiles(outer, inner))
      reduce_column_tiles_kernel<T, kWideColumnThreads><<<column_tile_grid(outer, inner), kWideColumnThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner, column_tile_width(inner));
    else if (n >= kSplitColumnsFrom)
      reduce_column_tiles_kernel<T, kColumnThreads><<<column_tile_grid(outer, inner), kColumnThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner, column_tile_width(inner));
    else
      reduce_columns_kernel<T><<<column_grid(outer * inner), kThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner);
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_softmax(ElementType type, const SoftmaxPlan& plan, const void* x, void* y, cudaStream_t stream) {
  const bool log_softmax = plan.log_softmax;
  const int64_t outer = plan.outer, n = plan.axis_len, inner = plan.inner;
  if (outer * inner == 0) return;
  MC_DISPATCH_TYPE(type, {
    const T* px = static_cast<const T*>(x);
    T* py = static_cast<T*>(y);
    const int blocks = row_blocks(outer), threads = 32 * kWarpsPerBlock;
    const int m = static_cast<int>(n);
    if (inner == 1 && n <= 32) softmax_rows_cached_kernel<T, 1><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1 && n <= 64) softmax_rows_cached_kernel<T, 2><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1 && n <= 128) softmax_rows_cached_kernel<T, 4><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1 && n <= 256) softmax_rows_cached_kernel<T, 8><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1 && n <= 512) softmax_rows_cached_kernel<T, 16><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1 && n <= 1024) softmax_rows_cached_kernel<T, 32><<<blocks, threads, 0, stream>>>(log_softmax, px, py, outer, m);
    else if (inner == 1)
      softmax_rows_kernel<T><<<row_blocks(outer), 32 * kWarpsPerBlock, 0, stream>>>(
          log_softmax, static_cast<const T*>(x), static_cast<T*>(y), outer, n);
    else if (cluster_columns(outer, n, inner))
      launch_column_clusters(softmax_column_cluster_kernel<T, kWideColumnThreads>, outer, inner, stream, log_softmax, px, py, n,
                             inner, column_tile_width(inner));
    else if (n >= kSplitColumnsFrom && few_column_tiles(outer, inner))
      softmax_column_tiles_kernel<T, kWideColumnThreads><<<column_tile_grid(outer, inner), kWideColumnThreads, 0, stream>>>(
          log_softmax, px, py, outer, n, inner, column_tile_width(inner));
    else if (n >= kSplitColumnsFrom)
      softmax_column_tiles_kernel<T, kColumnThreads><<<column_tile_grid(outer, inner), kColumnThreads, 0, stream>>>(
          log_softmax, px, py, outer, n, inner, column_tile_width(inner));
    else
      softmax_columns_kernel<T><<<column_grid(outer * inner), kThreads, 0, stream>>>(log_softmax, px, py, outer, n, inner);
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_batch_norm(ElementType type, const BatchNormPlan& plan, const NormOperands& o, cudaStream_t stream) {
  const int64_t channels = plan.axis_len, inner = plan.inner;
  const int64_t n = plan.outer * channels * inner;
  if (n == 0) return;
  if (!fits_int32(n)) throw Error(kExitRuntime, "BatchNormalization over more than 2^31 elements");
  const FastDivider inner_div(static_cast<uint32_t>(inner)), channel_div(static_cast<uint32_t>(channels));
  const bool aligned = ((reinterpret_cast<uintptr_t>(o.x) | reinterpret_cast<uintptr_t>(o.y)) & 15) == 0;
  MC_DISPATCH_TYPE(type, {
    constexpr int W = 16 / sizeof(T);
    const bool same_channel = inner % W == 0, channels_inner = inner == 1 && channels % W == 0;
    if (aligned && (same_channel || channels_inner)) {
      const uint32_t vectors = static_cast<uint32_t>(n / W);
      const int vector_grid = column_grid(vectors);
      const auto* px = static_cast<const T*>(o.x);
      const auto *pg = static_cast<const T*>(o.scale), *pb = static_cast<const T*>(o.bias);
      const auto *pm = static_cast<const T*>(o.mean), *pv = static_cast<const T*>(o.variance);
      auto* py = static_cast<T*>(o.y);
      const float eps = static_cast<float>(plan.epsilon);
      if (same_channel)
        batch_norm_vector_kernel<T, false><<<vector_grid, kThreads, 0, stream>>>(px, pg, pb, pm, pv, py, inner_div, channel_div, vectors, eps);
      else
        batch_norm_vector_kernel<T, true><<<vector_grid, kThreads, 0, stream>>>(px, pg, pb, pm, pv, py, inner_div, channel_div, vectors, eps);
      MC_CUDA_CHECK_LAUNCH();
      return;
    }
  });
  const int grid = column_grid(n);
  MC_DISPATCH_TYPE(type, batch_norm_kernel<T><<<grid, kThreads, 0, stream>>>(
                             static_cast<const T*>(o.x), static_cast<const T*>(o.scale), static_cast<const T*>(o.bias),
                             static_cast<const T*>(o.mean), static_cast<const T*>(o.variance), static_cast<T*>(o.y),
                             inner_div, channel_div, static_cast<uint32_t>(n), static_cast<float>(plan.epsilon)));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
