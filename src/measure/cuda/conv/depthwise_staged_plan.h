// The staged depthwise kernel's launch plan (depthwise_staged.cuh): which geometries it runs,
// the output tile of a block and a thread's share of it, chosen on the host from the geometry and
// the SM count. Apart from the kernel so that its limits are tested without a GPU.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/kernels.h"

namespace modelcost::cuda {

constexpr int kStagedCols = 4;            // a thread's outputs: `thread_rows` x kStagedCols pixels
constexpr int kStagedMaxPairs = 32;       // channel pairs per block (64 channels: a warp's lanes)
constexpr int kStagedMaxThreads = 256;
constexpr size_t kStagedSharedLimit = 48 * 1024;

// A block's output tile: `rows` x `cols` pixels (cols a multiple of kStagedCols, rows of
// thread_rows) of `pairs` channel pairs (a multiple of 4: 16-byte copies), and the input window
// they read. A thread computes thread_rows x 4 outputs: 4 x 4 where the work is large (each
// filter row loaded once for 16 outputs), 1 x 4 where that would leave the SMs short of threads
// (batch 1, late stages).
struct StagedTile {
  int thread_rows = 4, rows = 8, cols = 16, pairs = kStagedMaxPairs;
  int in_h = 0, in_w = 0;
  __host__ __device__ int threads_per_row() const { return cols / kStagedCols; }
  int threads() const { return pairs * (rows / thread_rows) * threads_per_row(); }
};

inline size_t staged_shared_bytes(const DepthwiseGeometry& g, const StagedTile& t, int element_bytes) {
  return size_t(t.in_h) * t.in_w * t.pairs * 2 * element_bytes + size_t(g.kernel_h) * g.kernel_w * t.pairs * 2 * sizeof(float);
}

inline StagedTile with_window(const DepthwiseGeometry& g, StagedTile t) {
  t.in_h = (t.rows - 1) * g.stride_h + g.kernel_h;
  t.in_w = (t.cols - 1) * g.stride_w + g.kernel_w;
  return t;
}

inline bool staged_window_compiled(const DepthwiseGeometry& g) {
  const bool width = g.kernel_w == 3 || g.kernel_w == 5 || g.kernel_w == 7 || g.kernel_w == 9;
  return width && g.stride_w == g.stride_h && (g.stride_w == 1 || g.stride_w == 2) && g.dilation_h == 1 && g.dilation_w == 1;
}

// The grid's dimensions: output tiles of an image, and chunks of channel pairs.
inline int64_t staged_tiles(const DepthwiseGeometry& g, const StagedTile& t) {
  return ((g.out_h + t.rows - 1) / t.rows) * ((g.out_w + t.cols - 1) / t.cols);
}
inline int64_t staged_chunks(const DepthwiseGeometry& g, const StagedTile& t) { return (g.channels / 2 + t.pairs - 1) / t.pairs; }

// Threads of the whole grid.
inline int64_t staged_grid_threads(const DepthwiseGeometry& g, const StagedTile& t) {
  return staged_tiles(g, t) * staged_chunks(g, t) * g.batch * t.threads();
}

inline int staged_round_up(int64_t v, int to) { return static_cast<int>((v + to - 1) / to * to); }

// The tile: 8 x 16 pixels of 64 channels, 4 x 4 outputs a thread, where the work gives every SM
// eight warps with them; else 1 x 4 outputs a thread, then fewer rows, narrower tiles and fewer
// channels; within 256 threads and the shared memory limit. Channel pairs are spread evenly over
// the chunks, in multiples of 4 (96 channels: two chunks of 24 pairs, not 32 and 16).
inline StagedTile staged_tile(const DepthwiseGeometry& g, int element_bytes, int sms) {
  const int64_t pairs = g.channels / 2, chunks = (pairs + kStagedMaxPairs - 1) / kStagedMaxPairs;
  const int64_t wanted = int64_t(8) * 32 * sms;
  StagedTile t;
  t.pairs = staged_round_up((pairs + chunks - 1) / chunks, 4);
  t.rows = static_cast<int>(std::min<int64_t>(8, staged_round_up(g.out_h, 4)));
  t.cols = static_cast<int>(std::min<int64_t>(16, staged_round_up(g.out_w, kStagedCols)));
  if (t.rows == 8 && staged_grid_threads(g, t) < wanted) t.rows = 4;
  if (staged_grid_threads(g, t) < wanted) {
    t.thread_rows = 1;
    t.rows = static_cast<int>(std::min<int64_t>(t.rows, g.out_h));
    while (t.threads() > kStagedMaxThreads && t.rows > 1) --t.rows;
  }
  while (t.thread_rows == 1 && staged_grid_threads(g, t) < wanted) {
    if (t.rows > 1) t.rows = (t.rows + 1) / 2;
    else if (t.cols > kStagedCols) t.cols -= kStagedCols;
    else if (t.pairs > 4) t.pairs = staged_round_up(t.pairs / 2, 4);
    else break;
  }
  while (t.threads() > kStagedMaxThreads || staged_shared_bytes(g, with_window(g, t), element_bytes) > kStagedSharedLimit) {
    if (t.cols > kStagedCols) t.cols -= kStagedCols;
    else if (t.rows > t.thread_rows) t.rows -= t.thread_rows;
    else if (t.pairs > 4) t.pairs -= 4;
    else break;
  }
  return with_window(g, t);
}

inline bool staged_applies(const DepthwiseGeometry& g, int element_bytes) {
  if (element_bytes != 2 || !g.channels_last || g.multiplier != 1 || g.channels % 8 != 0 || !staged_window_compiled(g))
    return false;
  const StagedTile t = staged_tile(g, element_bytes, 1);
  if (g.batch > 65535 || staged_chunks(g, t) > 65535) return false;
  if (staged_tiles(g, t) > (int64_t(1) << 31) - 1) return false;
  return staged_shared_bytes(g, t, element_bytes) <= kStagedSharedLimit;
}

}  // namespace modelcost::cuda
