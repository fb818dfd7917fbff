// Kernels over the columns of a [outer, n, inner] view with n long (norm_kernels.cu launches
// them): column tiles whose rows of threads split n, and, where the tiles are fewer than the SMs,
// a cluster of blocks per tile.
#pragma once
#include <cooperative_groups.h>

#include "norm/reduce_math.cuh"

namespace modelcost::cuda {

// Columns of a [outer, n, inner] view with n long: a block (kColumnThreads threads, more where the
// tiles are few) owns a tile of `width` adjacent columns (a power of two up to 32) and its rows of
// threads split n, so a few hundred columns of thousands of elements (softmax over tokens with a
// small inner dim, GRN's sum over an image) still fill the GPU; a thread per column would walk n
// alone.
constexpr int kColumnThreads = 256;

__device__ __forceinline__ float reduce_merge(ReduceOp op, float a, float b) {
  return op == ReduceOp::kMax ? fmaxf(a, b) : op == ReduceOp::kMin ? fminf(a, b) : op == ReduceOp::kProd ? a * b : a + b;
}

// Merges each column's partial values across the block's rows of threads; every thread gets its
// column's result. Every thread of the block must call it.
template <int kBlock>
__device__ float column_combine(ReduceOp op, float v, float* scratch, int width) {
  const int t = threadIdx.x;
  __syncthreads();  // the previous call's readers are done with scratch
  scratch[t] = v;
  __syncthreads();
  for (int half = kBlock / width / 2; half > 0; half >>= 1) {
    if (t / width < half) scratch[t] = reduce_merge(op, scratch[t], scratch[t + half * width]);
    __syncthreads();
  }
  return scratch[t % width];
}

// The tile this block's thread reads: its column i (live when i < inner) and its first row.
struct ColumnTile {
  int64_t o, i;
  int row, rows;
  bool live;
};
template <int kBlock>
__device__ __forceinline__ ColumnTile column_tile(int64_t tile, int64_t tiles, int64_t inner, int width) {
  const int64_t i = (tile % tiles) * width + threadIdx.x % width;
  return {tile / tiles, i, static_cast<int>(threadIdx.x) / width, kBlock / width, i < inner};
}

template <typename T, int kBlock>
__global__ void reduce_column_tiles_kernel(ReduceOp op, const T* x, T* y, int64_t outer, int64_t n, int64_t inner,
                                           int width) {
  __shared__ float scratch[kBlock];
  const int64_t tiles = (inner + width - 1) / width;
  for (int64_t tile = blockIdx.x; tile < outer * tiles; tile += gridDim.x) {
    const ColumnTile c = column_tile<kBlock>(tile, tiles, inner, width);
    const T* p = x + c.o * n * inner + c.i;
    float peak = 0.f;
    if (op == ReduceOp::kLogSumExp) {
      float m = -FLT_MAX;
      if (c.live)
#pragma unroll 4
      for (int64_t j = c.row; j < n; j += c.rows) m = fmaxf(m, to_float(p[j * inner]));
      peak = column_combine<kBlock>(ReduceOp::kMax, m, scratch, width);
    }
    float acc = reduce_init(op);
    if (c.live)
#pragma unroll 4
      for (int64_t j = c.row; j < n; j += c.rows) acc = reduce_step(op, acc, to_float(p[j * inner]), peak);
    acc = column_combine<kBlock>(op == ReduceOp::kLogSumExp ? ReduceOp::kSum : op, acc, scratch, width);
    if (c.live && c.row == 0) y[c.o * inner + c.i] = from_float<T>(reduce_finish(op, acc, n, peak));
  }
}

template <typename T, int kBlock>
__global__ void softmax_column_tiles_kernel(bool log_softmax, const T* x, T* y, int64_t outer, int64_t n,
                                            int64_t inner, int width) {
  __shared__ float scratch[kBlock];
  const int64_t tiles = (inner + width - 1) / width;
  for (int64_t tile = blockIdx.x; tile < outer * tiles; tile += gridDim.x) {
    const ColumnTile c = column_tile<kBlock>(tile, tiles, inner, width);
    const T* p = x + c.o * n * inner + c.i;
    T* q = y + c.o * n * inner + c.i;
    float m = -FLT_MAX;
    if (c.live)
#pragma unroll 4
      for (int64_t j = c.row; j < n; j += c.rows) m = fmaxf(m, to_float(p[j * inner]));
    m = column_combine<kBlock>(ReduceOp::kMax, m, scratch, width);
    float s = 0.f;
    if (c.live)
#pragma unroll 4
      for (int64_t j = c.row; j < n; j += c.rows) s += __expf(to_float(p[j * inner]) - m);
    s = column_combine<kBlock>(ReduceOp::kSum, s, scratch, width);
    const float inv = 1.f / s, log_s = __logf(s);
    if (c.live)
#pragma unroll 4
      for (int64_t j = c.row; j < n; j += c.rows) {
        const float v = to_float(p[j * inner]) - m;
        q[j * inner] = from_float<T>(log_softmax ? v - log_s : __expf(v) * inv);
      }
  }
}

// Fewer column tiles than SMs (CoaT's softmax over 3137 tokens of 8 heads of 8 channels: 8
// tiles) leave most of the GPU idle: a cluster of kColumnCluster blocks shares each tile, each
// block a slice of n. A block's per-column partials (softmax: the max and the sum of exponents
// under it) sit in its shared memory; after a cluster barrier every block merges its peers'
// through distributed shared memory, so the tile takes one kernel and no workspace.
constexpr int kColumnCluster = 8;

template <int kBlock>
struct ClusterTile {
  ColumnTile c;
  int64_t lo, hi;  // this block's slice of n
};
template <int kBlock>
__device__ ClusterTile<kBlock> cluster_tile(int64_t tiles, int64_t n, int64_t inner, int width, int rank) {
  const int64_t chunk = (n + kColumnCluster - 1) / kColumnCluster;
  const int64_t lo = rank * chunk;
  return {column_tile<kBlock>(blockIdx.x / kColumnCluster, tiles, inner, width), lo, lo + chunk < n ? lo + chunk : n};
}

template <typename T, int kBlock>
__global__ void softmax_column_cluster_kernel(bool log_softmax, const T* x, T* y, int64_t n, int64_t inner, int width) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float scratch[kBlock];
  __shared__ float partial[2][32];  // per column of the tile: the slice's max, its sum of exponents
  cg::cluster_group cluster = cg::this_cluster();
  const int64_t tiles = (inner + width - 1) / width;
  const ClusterTile<kBlock> t = cluster_tile<kBlock>(tiles, n, inner, width, static_cast<int>(cluster.block_rank()));
  const ColumnTile& c = t.c;
  const T* p = x + c.o * n * inner + c.i;
  T* q = y + c.o * n * inner + c.i;
  float m = -FLT_MAX;
  if (c.live)
    for (int64_t j = t.lo + c.row; j < t.hi; j += c.rows) m = fmaxf(m, to_float(p[j * inner]));
  m = column_combine<kBlock>(ReduceOp::kMax, m, scratch, width);
  float s = 0.f;
  if (c.live)
    for (int64_t j = t.lo + c.row; j < t.hi; j += c.rows) s += __expf(to_float(p[j * inner]) - m);
  s = column_combine<kBlock>(ReduceOp::kSum, s, scratch, width);
  const int column = threadIdx.x % width;
  if (threadIdx.x < width) {
    partial[0][column] = m;
    partial[1][column] = s;
  }
  cluster.sync();
  float peak = -FLT_MAX, sum = 0.f;
  for (int r = 0; r < kColumnCluster; ++r) peak = fmaxf(peak, cluster.map_shared_rank(&partial[0][0], r)[column]);
  for (int r = 0; r < kColumnCluster; ++r) {
    const float* peer = cluster.map_shared_rank(&partial[0][0], r);
    sum += peer[32 + column] * __expf(peer[column] - peak);
  }
  cluster.sync();  // every peer has read this block's partials before any block leaves
  const float inv = 1.f / sum, log_s = __logf(sum);
  if (c.live)
    for (int64_t j = t.lo + c.row; j < t.hi; j += c.rows) {
      const float v = to_float(p[j * inner]) - peak;
      q[j * inner] = from_float<T>(log_softmax ? v - log_s : __expf(v) * inv);
    }
#endif
}

// The same for reductions whose partial results merge as they are (sums, max, min, product; not
// log-sum-exp, which needs the peak first).
template <typename T, int kBlock>
__global__ void reduce_column_cluster_kernel(ReduceOp op, const T* x, T* y, int64_t n, int64_t inner, int width) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float scratch[kBlock];
  __shared__ float partial[32];
  cg::cluster_group cluster = cg::this_cluster();
  const int64_t tiles = (inner + width - 1) / width;
  const int rank = static_cast<int>(cluster.block_rank());
  const ClusterTile<kBlock> t = cluster_tile<kBlock>(tiles, n, inner, width, rank);
  const ColumnTile& c = t.c;
  const T* p = x + c.o * n * inner + c.i;
  float acc = reduce_init(op);
  if (c.live)
    for (int64_t j = t.lo + c.row; j < t.hi; j += c.rows) acc = reduce_step(op, acc, to_float(p[j * inner]), 0.f);
  acc = column_combine<kBlock>(op, acc, scratch, width);
  const int column = threadIdx.x % width;
  if (threadIdx.x < width) partial[column] = acc;
  cluster.sync();
  if (rank == 0 && c.live && c.row == 0) {
    float all = reduce_init(op);
    for (int r = 0; r < kColumnCluster; ++r) all = reduce_merge(op, all, cluster.map_shared_rank(&partial[0], r)[column]);
    y[c.o * inner + c.i] = from_float<T>(reduce_finish(op, all, n, 0.f));
  }
  cluster.sync();  // the first block has read every peer's partials before any block leaves
#endif
}

}  // namespace modelcost::cuda
