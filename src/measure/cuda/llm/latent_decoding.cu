// Kernels of latent_decoding.h. A chunk block (4 warps) owns 16 query heads of one sequence and
// walks its chunk in tiles of 64 cache rows, double-buffered in shared memory by cp.async (the
// cache is the stream: its next tile is in flight while this one is computed). Per tile:
// (1) S = Q K^T on tensor cores, warp w taking keys 16w..16w+15 over the 576 columns, the scaled
// scores through shared memory; (2) every warp runs the same online softmax over the whole 16 x 64
// tile (cheap, and it spares a second exchange); (3) O += P V for the warp's 128 of the 512 value
// columns, V being the same tile's first 512 columns, loaded transposed by ldmatrix. The chunk's
// unnormalised output and (maximum, sum) go to the workspace; the merge kernel weighs the chunks.
#include <cuda_fp16.h>

#include <climits>
#include <string>

#include "core/cuda_check.h"
#include "llm/chunk_weights.cuh"
#include "core/tensor_core.cuh"
#include "llm/latent_decoding.h"

namespace modelcost::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kWidth = 576;                      // a cache row: latent 512, then rotary 64
constexpr int kLatent = 512;                     // the values: a row's first 512 columns
constexpr int kSlice = kLatent / kWarps;         // value columns per warp
constexpr int kHeads = latent_decoding_head_tile;
constexpr int kKeys = latent_decoding_key_tile;
// Shared rows are 576 + 8 halves apart (1168 bytes, 16 past a multiple of 128): the eight
// 16-byte rows an ldmatrix reads fall in different banks.
constexpr int kLd = kWidth + 8;
constexpr int kScoreLd = kKeys + 8;              // floats; conflict-free float2 reads and writes
constexpr int kQueryHalves = kHeads * kLd;
constexpr int kTileHalves = kKeys * kLd;
constexpr size_t kSharedBytes = sizeof(__half) * (kQueryHalves + 2 * kTileHalves) + sizeof(float) * kHeads * kScoreLd;
constexpr float kLog2e = 1.4426950408889634f;

static_assert(kSlice == 128 && kKeys == 16 * kWarps, "warp w scores keys 16w.. and weighs value columns 128w..");
static_assert(kSharedBytes <= 227 * 1024, "one block's shared memory on Hopper");

struct ChunkArgs {
  LatentDecodingShape shape;
  LatentDecodingSplit split;
  LatentDecodingArgs io;
};

// The warp's running output rows (heads g and g + 8 of the tile, g = lane / 4; columns 2t, 2t + 1
// of each 8-wide tile of its slice, t = lane % 4), with their running maximum (base 2) and sum.
struct Running {
  float out[kSlice / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
};

// `rows` rows of 576 halves from src into shared rows kLd apart; rows from `valid` on are
// zero-filled, not read (cache rows past the context may hold anything, NaN included).
__device__ __forceinline__ void stage_rows(__half* dst, const __half* src, int rows, int valid) {
  constexpr int kPieces = kWidth / 8;  // 16-byte copies per row
  for (int v = threadIdx.x; v < rows * kPieces; v += kThreads) {
    const int r = v / kPieces, c = (v % kPieces) * 8;
    const bool read = r < valid;
    copy_async16(dst + r * kLd + c, read ? src + static_cast<int64_t>(r) * kWidth + c : src, read);
  }
}

// S = Q K^T for keys 16w..16w+15 of the tile (w: this warp), scaled to base 2, into s_s; keys from
// `valid` on at -inf. Even and odd k-steps accumulate apart: two chains of 18 mma, not one of 36.
// The query fragments are read from shared memory per step: held, they would take 144 registers.
__device__ __forceinline__ void score_tile(const __half* qs, const __half* kt, float* s_s, int valid, float scale2) {
  const int lane = threadIdx.x % 32, key0 = (threadIdx.x / 32) * 16;
  float acc[2][2][4] = {};
  if (key0 < valid) {
    const __half* q_at = qs + (lane % 16) * kLd + (lane / 16) * 8;
    const __half* k_at = kt + (key0 + (lane / 16) * 8 + lane % 8) * kLd + ((lane / 8) & 1) * 8;
#pragma unroll 3
    for (int kk = 0; kk < kWidth / 16; kk += 2) {
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        uint32_t qf[4], kf[4];
        ldmatrix_x4(qf, q_at + (kk + p) * 16);
        ldmatrix_x4(kf, k_at + (kk + p) * 16);
        mma16816(acc[p][0], qf, kf[0], kf[1]);
        mma16816(acc[p][1], qf, kf[2], kf[3]);
      }
    }
  }
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int key = key0 + 8 * n + 2 * t;
      float2 s;
      s.x = key < valid ? (acc[0][n][2 * r] + acc[1][n][2 * r]) * scale2 : -INFINITY;
      s.y = key + 1 < valid ? (acc[0][n][2 * r + 1] + acc[1][n][2 * r + 1]) * scale2 : -INFINITY;
      *reinterpret_cast<float2*>(s_s + (g + 8 * r) * kScoreLd + key) = s;
    }
}

// The online softmax step over the tile's 16 x 64 scores: p gets the exponents against the new
// running maximum (in the mma A layout: p[j] covers keys 8j..8j+7), the output so far is rescaled.
// A row's four lanes share its maximum; each lane keeps its own part of the sum until the end.
__device__ __forceinline__ void softmax_tile(const float* s_s, float (&p)[kKeys / 8][4], Running& run) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = run.row_max[r];
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j) {
      const float2 s = *reinterpret_cast<const float2*>(s_s + (g + 8 * r) * kScoreLd + 8 * j + 2 * t);
      p[j][2 * r] = s.x;
      p[j][2 * r + 1] = s.y;
      m = fmaxf(m, fmaxf(s.x, s.y));
    }
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
    const float base = m == -INFINITY ? 0.f : m;
    const float correction = fast_exp2(run.row_max[r] - base);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        p[j][e] = fast_exp2(p[j][e] - base);
        sum += p[j][e];
      }
    run.row_sum[r] = run.row_sum[r] * correction + sum;
    run.row_max[r] = m;
#pragma unroll
    for (int dn = 0; dn < kSlice / 8; ++dn) {
      run.out[dn][2 * r] *= correction;
      run.out[dn][2 * r + 1] *= correction;
    }
  }
}

// O += P V for the warp's 128 value columns: two 8-key score tiles form one 16-key A fragment;
// V rows (the tile's rows, first 512 columns) load transposed. 16-key steps past `valid` are
// skipped (their exponents are 0 and their rows zero-filled anyway).
__device__ __forceinline__ void add_values(float (&out)[kSlice / 8][4], const float (&p)[kKeys / 8][4], const __half* vt,
                                           int valid) {
  const int lane = threadIdx.x % 32;
  const __half* v_at = vt + (((lane / 8) & 1) * 8 + lane % 8) * kLd + (threadIdx.x / 32) * kSlice + (lane / 16) * 8;
#pragma unroll
  for (int kk = 0; kk < kKeys / 16; ++kk) {
    if (kk * 16 >= valid) break;
    const uint32_t pf[4] = {pack_halves(p[2 * kk][0], p[2 * kk][1]), pack_halves(p[2 * kk][2], p[2 * kk][3]),
                            pack_halves(p[2 * kk + 1][0], p[2 * kk + 1][1]), pack_halves(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int dp = 0; dp < kSlice / 16; ++dp) {
      uint32_t vf[4];
      ldmatrix_x4_trans(vf, v_at + kk * 16 * kLd + dp * 16);
      mma16816(out[2 * dp], pf, vf[0], vf[1]);
      mma16816(out[2 * dp + 1], pf, vf[2], vf[3]);
    }
  }
}

// The chunk's unnormalised output rows (each warp its slice) and, from warp 0, (maximum, sum) per
// head; rows past the last head are padding and not written.
__device__ __forceinline__ void write_partials(const ChunkArgs& a, const Running& run, int b, int head0, int split) {
  const LatentDecodingShape& sh = a.shape;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t parts = static_cast<int64_t>(sh.batch) * sh.heads * a.split.splits;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = run.row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int head = head0 + g + 8 * r;
    if (head >= sh.heads) continue;
    const int64_t part = (static_cast<int64_t>(b) * sh.heads + head) * a.split.splits + split;
    float* o = a.io.workspace + part * kLatent + warp * kSlice + 2 * t;
#pragma unroll
    for (int dn = 0; dn < kSlice / 8; ++dn)
      *reinterpret_cast<float2*>(o + 8 * dn) = make_float2(run.out[dn][2 * r], run.out[dn][2 * r + 1]);
    if (warp == 0 && t == 0)
      *reinterpret_cast<float2*>(a.io.workspace + parts * kLatent + 2 * part) = make_float2(run.row_max[r], sum);
  }
}

// Block (sequence b, head tile, chunk). Per tile: wait for its rows, one barrier (which also frees
// the other buffer and the scores of the tile before), start the next tile's copies, score,
// a second barrier, then softmax and values.
__global__ void __launch_bounds__(kThreads, latent_decoding_resident_blocks) chunk_kernel(const ChunkArgs a) {
  const LatentDecodingShape& sh = a.shape;
  const int head_tiles = latent_decoding_head_tiles(sh.heads);
  const int b = blockIdx.x / head_tiles, head0 = (blockIdx.x % head_tiles) * kHeads, split = blockIdx.y;
  const int64_t start = static_cast<int64_t>(split) * a.split.chunk;
  const int n = static_cast<int>(min(static_cast<int64_t>(a.split.chunk), sh.context - start));  // >= 1 by the plan
  extern __shared__ __align__(128) unsigned char smem[];
  __half* qs = reinterpret_cast<__half*>(smem);                     // [16][kLd] queries, rows past the heads zero
  __half* ks = qs + kQueryHalves;                                   // 2 x [64][kLd] cache tiles
  float* s_s = reinterpret_cast<float*>(ks + 2 * kTileHalves);      // [16][kScoreLd] scores of a tile
  const __half* rows = a.io.cache + (static_cast<int64_t>(b) * sh.cache_len + start) * kWidth;
  stage_rows(qs, a.io.q + (static_cast<int64_t>(b) * sh.heads + head0) * kWidth, kHeads, min(kHeads, sh.heads - head0));
  stage_rows(ks, rows, kKeys, min(kKeys, n));
  commit_copies();
  const int tiles = (n + kKeys - 1) / kKeys;
  const float scale2 = a.io.scale * kLog2e;
  Running run;
  for (int tile = 0; tile < tiles; ++tile) {
    const __half* kt = ks + (tile & 1) * kTileHalves;
    const int valid = min(kKeys, n - tile * kKeys);
    wait_copies<0>();
    __syncthreads();  // this tile is in; every warp is done with the other buffer and the last scores
    if (tile + 1 < tiles) {
      const int next = (tile + 1) * kKeys;
      stage_rows(ks + ((tile + 1) & 1) * kTileHalves, rows + static_cast<int64_t>(next) * kWidth, kKeys, min(kKeys, n - next));
      commit_copies();
    }
    score_tile(qs, kt, s_s, valid, scale2);
    __syncthreads();  // the tile's 16 x 64 scores are in
    float p[kKeys / 8][4];
    softmax_tile(s_s, p, run);
    add_values(run.out, p, kt, valid);
  }
  write_partials(a, run, b, head0, split);
}

// One block per (sequence, head): warp 0 weighs the chunks against their largest maximum, then
// each of kMergeGroups groups of threads sums four columns a thread over every kMergeGroups-th
// chunk, and the groups' sums meet in shared memory. A sequence's few blocks would otherwise walk
// its chunks one load latency after another (32 chunks took about 4 us in one group).
constexpr int kMergeGroups = 4;

__global__ void __launch_bounds__(kThreads * kMergeGroups) merge_kernel(const LatentDecodingShape sh, const LatentDecodingSplit split,
                                                                        const float* workspace, __half* out) {
  extern __shared__ float weight_s[];  // [splits], the denominator, then [groups - 1][512] sums
  float4* sums = reinterpret_cast<float4*>(weight_s + (split.splits + 4) / 4 * 4);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * split.splits;
  const float* ml = workspace + static_cast<int64_t>(sh.batch) * sh.heads * split.splits * kLatent;
  weigh_chunks(ml, first, split.splits, weight_s, [](float x) { return exp2f(x); });
  __syncthreads();
  const int group = threadIdx.x / kThreads, column = threadIdx.x % kThreads;
  float4 num = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
  for (int s = group; s < split.splits; s += kMergeGroups) {
    const float w = weight_s[s];
    const float4 o = reinterpret_cast<const float4*>(workspace + (first + s) * kLatent)[column];
    num.x += w * o.x;
    num.y += w * o.y;
    num.z += w * o.z;
    num.w += w * o.w;
  }
  if (group > 0) sums[(group - 1) * kThreads + column] = num;
  __syncthreads();
  if (group > 0) return;
  for (int g = 1; g < kMergeGroups; ++g) {
    const float4 o = sums[(g - 1) * kThreads + column];
    num.x += o.x;
    num.y += o.y;
    num.z += o.z;
    num.w += o.w;
  }
  const float inverse = 1.f / weight_s[split.splits];
  __half2* row = reinterpret_cast<__half2*>(out + static_cast<int64_t>(blockIdx.x) * kLatent);
  row[2 * column] = __floats2half2_rn(num.x * inverse, num.y * inverse);
  row[2 * column + 1] = __floats2half2_rn(num.z * inverse, num.w * inverse);
}

static_assert(kThreads * 4 == kLatent, "a merge thread takes four columns");

// Every chunk must hold at least one position (an empty one would leave a -inf maximum behind) and
// the grid must fit: the plan's splits do.
void check_launch(const LatentDecodingShape& sh, const LatentDecodingSplit& split) {
  const int64_t blocks = static_cast<int64_t>(sh.batch) * latent_decoding_head_tiles(sh.heads);
  const bool ok = latent_decoding_supports(sh) && split.chunk >= kKeys && split.chunk % kKeys == 0 && split.splits >= 1 &&
                  split.splits <= latent_decoding_most_splits &&
                  static_cast<int64_t>(split.splits) * split.chunk >= sh.context &&
                  static_cast<int64_t>(split.splits - 1) * split.chunk < sh.context && blocks <= INT_MAX &&
                  static_cast<int64_t>(sh.batch) * sh.heads <= INT_MAX;
  if (!ok)
    throw Error(kExitRuntime, "latent decoding: batch " + std::to_string(sh.batch) + ", " + std::to_string(sh.heads) +
                                  " heads, widths " + std::to_string(sh.latent) + "+" + std::to_string(sh.rope) + ", context " +
                                  std::to_string(sh.context) + " of " + std::to_string(sh.cache_len) + " in " +
                                  std::to_string(split.splits) + " chunks of " + std::to_string(split.chunk) +
                                  " (latent 512 + rotary 64, chunks of whole 64-row tiles covering the context run)");
}

}  // namespace

size_t latent_decoding_workspace_floats(const LatentDecodingShape& sh, const LatentDecodingSplit& split) {
  return static_cast<size_t>(sh.batch) * sh.heads * split.splits * (kLatent + 2);
}

void launch_latent_decoding(const LatentDecodingShape& sh, const LatentDecodingSplit& split, const LatentDecodingArgs& io,
                            cudaStream_t stream) {
  check_launch(sh, split);
  allow_shared_bytes(reinterpret_cast<const void*>(chunk_kernel), kSharedBytes);
  const dim3 grid(static_cast<unsigned>(sh.batch * latent_decoding_head_tiles(sh.heads)), static_cast<unsigned>(split.splits));
  chunk_kernel<<<grid, kThreads, kSharedBytes, stream>>>(ChunkArgs{sh, split, io});
  MC_CUDA_CHECK_LAUNCH();
  const size_t merge_bytes = sizeof(float) * ((split.splits + 4) / 4 * 4 + (kMergeGroups - 1) * kLatent);
  merge_kernel<<<static_cast<unsigned>(sh.batch * sh.heads), kThreads * kMergeGroups, merge_bytes, stream>>>(sh, split, io.workspace,
                                                                                                            io.out);
  MC_CUDA_CHECK_LAUNCH();
}

int latent_decoding_blocks_per_sm() {
  allow_shared_bytes(reinterpret_cast<const void*>(chunk_kernel), kSharedBytes);
  int blocks = 0;
  MC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, chunk_kernel, kThreads, kSharedBytes));
  return blocks;
}

}  // namespace modelcost::cuda
