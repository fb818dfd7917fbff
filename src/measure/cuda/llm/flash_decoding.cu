// Kernels of flash_decoding.h. A chunk block: (1) each thread scores whole K rows against the
// group's queries (held in shared memory), (2) one warp per query head takes the chunk's max and
// exponent sum, (3) threads take 16-byte pieces of V rows, several rows in flight, and the
// pieces' sums meet in shared memory. Loads are kept in flight: decode attention is a stream.
#include <algorithm>

#include "core/cuda_check.h"
#include "llm/chunk_weights.cuh"
#include "llm/flash_decoding.h"

namespace modelcost::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kHeadsPerPass = 8;  // query heads accumulated together in phase 3
constexpr int kMaxSharedBytes = 96 * 1024;  // queries, scores and the cross-warp sums at most

struct ChunkArgs {
  FlashDecodingShape shape;
  FlashDecodingSplit split;
  FlashDecodingArgs io;
  float scale;
};

// Thread per K row: the next row's loads are issued before the current one is scored; the first
// row (`next`) was loaded by the caller before the queries, so its latency overlaps theirs.
template <int D>
__device__ void score_chunk(const ChunkArgs& a, const __half* keys, const float* q_s, float* s_s, int group, int n,
                            uint4 (&next)[D / 8]) {
  constexpr int kPieces = D / 8;  // 16-byte pieces per row
  const uint4* rows = reinterpret_cast<const uint4*>(keys);
  for (int j = threadIdx.x; j < n; j += kThreads) {
    uint4 row[kPieces];
#pragma unroll
    for (int c = 0; c < kPieces; ++c) row[c] = next[c];
    if (j + kThreads < n) {
#pragma unroll
      for (int c = 0; c < kPieces; ++c) next[c] = rows[static_cast<int64_t>(j + kThreads) * kPieces + c];
    }
    for (int h = 0; h < group; ++h) {
      const float4* q = reinterpret_cast<const float4*>(q_s + h * D);
      float acc = 0.f;
#pragma unroll
      for (int c = 0; c < kPieces; ++c) {
        const __half2* k = reinterpret_cast<const __half2*>(&row[c]);
        const float2 k0 = __half22float2(k[0]), k1 = __half22float2(k[1]), k2 = __half22float2(k[2]), k3 = __half22float2(k[3]);
        const float4 qa = q[2 * c], qb = q[2 * c + 1];
        acc += qa.x * k0.x + qa.y * k0.y + qa.z * k1.x + qa.w * k1.y + qb.x * k2.x + qb.y * k2.y + qb.z * k3.x + qb.w * k3.y;
      }
      s_s[h * a.split.chunk + j] = acc;
    }
  }
}

// V rows in flight per thread: fewer for head_dim 128, whose K rows already hold more registers.
template <int D>
constexpr int value_depth() { return D == 64 ? 8 : 4; }

// Thread (row slot r, piece c) sums dims 8c..8c+7 of V rows r, r + R, ... weighted by the
// exponents of up to kHeadsPerPass heads, value_depth rows per thread in flight; the first trip's
// rows (`first`, when `use_first`) were loaded by the caller before the scores.
template <int D>
__device__ void accumulate_values(const ChunkArgs& a, const __half* values, const float* s_s, int h0, int count, int n,
                                  const uint4 (&first)[value_depth<D>()], bool use_first, float (&acc)[kHeadsPerPass][8]) {
  constexpr int kPieces = D / 8, kSlots = kThreads / kPieces, kDepth = value_depth<D>();
  const int c = threadIdx.x % kPieces, r = threadIdx.x / kPieces;
  const uint4* rows = reinterpret_cast<const uint4*>(values);
  for (int j0 = r; j0 < n; j0 += kDepth * kSlots) {
    uint4 v[kDepth];
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const int j = j0 + u * kSlots;
      v[u] = use_first && j0 == r ? first[u] : j < n ? rows[static_cast<int64_t>(j) * kPieces + c] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const int j = j0 + u * kSlots;
      if (j >= n) break;
      const __half2* h2 = reinterpret_cast<const __half2*>(&v[u]);
      float f[8];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 x = __half22float2(h2[e]);
        f[2 * e] = x.x;
        f[2 * e + 1] = x.y;
      }
#pragma unroll
      for (int h = 0; h < kHeadsPerPass; ++h) {
        if (h >= count) break;
        const float p = s_s[(h0 + h) * a.split.chunk + j];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[h][e] += p * f[e];
      }
    }
  }
}

// Scores to exponents in place; max and sum per head to ml_s[2h], ml_s[2h+1].
__device__ void softmax_chunk(const ChunkArgs& a, float* s_s, float* ml_s, int group, int n) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int h = warp; h < group; h += kWarps) {
    float* s = s_s + h * a.split.chunk;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, s[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float l = 0.f;
    for (int j = lane; j < n; j += 32) {
      const float p = __expf(s[j] - m);
      s[j] = p;
      l += p;
    }
    for (int o = 16; o > 0; o >>= 1) l += __shfl_xor_sync(0xffffffffu, l, o);
    if (lane == 0) {
      ml_s[2 * h] = m;
      ml_s[2 * h + 1] = l;
    }
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads, flash_decoding_resident_blocks(D)) chunk_kernel(ChunkArgs a) {
  const FlashDecodingShape& sh = a.shape;
  const int group = sh.heads / sh.kv_heads;
  const int b = blockIdx.x / sh.kv_heads, kvh = blockIdx.x % sh.kv_heads, split = blockIdx.y;
  const int64_t start = static_cast<int64_t>(split) * a.split.chunk;
  const int n = static_cast<int>(min(static_cast<int64_t>(a.split.chunk), sh.context - start));
  extern __shared__ float4 shared4[];
  float* q_s = reinterpret_cast<float*>(shared4);             // [group][D]
  float* s_s = q_s + group * D;                                // [group][chunk]
  float* red = s_s + group * a.split.chunk;                    // [warps][kHeadsPerPass][D]
  float* ml_s = red + kWarps * kHeadsPerPass * D;              // [group][2]
  constexpr int kPieces = D / 8, kDepth = value_depth<D>(), kSlots = kThreads / kPieces;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, c = threadIdx.x % kPieces;
  // The first K row and V rows of each thread are requested before the queries: the three loads
  // then cost one memory latency instead of three in a row.
  const int64_t base = ((static_cast<int64_t>(b) * sh.kv_heads + kvh) * sh.cache_len + start) * D;
  const uint4* k_rows = reinterpret_cast<const uint4*>(a.io.k_cache + base);
  const uint4* v_rows = reinterpret_cast<const uint4*>(a.io.v_cache + base);
  uint4 k_first[kPieces], v_first[kDepth];
  if (threadIdx.x < n) {
#pragma unroll
    for (int p = 0; p < kPieces; ++p) k_first[p] = k_rows[static_cast<int64_t>(threadIdx.x) * kPieces + p];
  }
#pragma unroll
  for (int u = 0; u < kDepth; ++u) {
    const int j = threadIdx.x / kPieces + u * kSlots;
    v_first[u] = j < n ? v_rows[static_cast<int64_t>(j) * kPieces + c] : make_uint4(0, 0, 0, 0);
  }
  const __half* q = a.io.q + (static_cast<int64_t>(b) * sh.heads + kvh * group) * D;
  for (int i = threadIdx.x; i < group * D; i += kThreads) q_s[i] = __half2float(q[i]) * a.scale;
  __syncthreads();
  score_chunk<D>(a, a.io.k_cache + base, q_s, s_s, group, n, k_first);
  __syncthreads();
  softmax_chunk(a, s_s, ml_s, group, n);
  __syncthreads();
  for (int h0 = 0; h0 < group; h0 += kHeadsPerPass) {
    const int count = min(kHeadsPerPass, group - h0);
    float acc[kHeadsPerPass][8] = {};
    accumulate_values<D>(a, a.io.v_cache + base, s_s, h0, count, n, v_first, h0 == 0, acc);
    // The warp's row slots hold the same pieces: sum them, then one slot per warp writes.
#pragma unroll
    for (int h = 0; h < kHeadsPerPass; ++h)
#pragma unroll
      for (int e = 0; e < 8; ++e)
        for (int o = kPieces; o < 32; o <<= 1) acc[h][e] += __shfl_xor_sync(0xffffffffu, acc[h][e], o);
    if (lane < kPieces) {
#pragma unroll
      for (int h = 0; h < kHeadsPerPass; ++h)
#pragma unroll
        for (int e = 0; e < 8; ++e) red[(warp * kHeadsPerPass + h) * D + c * 8 + e] = acc[h][e];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < count * D; i += kThreads) {
      const int h = i / D, d = i % D;
      float sum = 0.f;
      for (int w = 0; w < kWarps; ++w) sum += red[(w * kHeadsPerPass + h) * D + d];
      const int head = kvh * group + h0 + h;
      const int64_t part = (static_cast<int64_t>(b) * sh.heads + head) * a.split.splits + split;
      a.io.workspace[part * D + d] = sum;
      if (d == 0) {
        float* ml = a.io.workspace + static_cast<int64_t>(sh.batch) * sh.heads * a.split.splits * D + 2 * part;
        ml[0] = ml_s[2 * (h0 + h)];
        ml[1] = ml_s[2 * (h0 + h) + 1];
      }
    }
    __syncthreads();
  }
}

// One block per (sequence, query head): warp 0 weighs the chunks, then one thread per head dim
// sums the chunks' outputs (independent loads, so they overlap).
__global__ void merge_kernel(FlashDecodingShape sh, FlashDecodingSplit split, const float* workspace, __half* out) {
  extern __shared__ float weight_s[];  // [splits], then the denominator
  const int64_t first = static_cast<int64_t>(blockIdx.x) * split.splits;
  const float* ml = workspace + static_cast<int64_t>(sh.batch) * sh.heads * split.splits * sh.head_dim;
  weigh_chunks(ml, first, split.splits, weight_s, [](float x) { return __expf(x); });
  __syncthreads();
  float num = 0.f;
#pragma unroll 4
  for (int s = 0; s < split.splits; ++s) num += weight_s[s] * workspace[(first + s) * sh.head_dim + threadIdx.x];
  out[static_cast<int64_t>(blockIdx.x) * sh.head_dim + threadIdx.x] = __float2half(num / weight_s[split.splits]);
}

size_t shared_bytes(const FlashDecodingShape& sh, const FlashDecodingSplit& split) {
  const int group = sh.heads / sh.kv_heads;
  return sizeof(float) * (static_cast<size_t>(group) * sh.head_dim + static_cast<size_t>(group) * split.chunk +
                          static_cast<size_t>(kWarps) * kHeadsPerPass * sh.head_dim + 2 * group);
}

template <int D>
void launch_chunks(const ChunkArgs& a, cudaStream_t stream) {
  const size_t bytes = shared_bytes(a.shape, a.split);
  const dim3 grid(a.shape.batch * a.shape.kv_heads, a.split.splits);
  chunk_kernel<D><<<grid, kThreads, bytes, stream>>>(a);
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace

void prepare_flash_decoding() {
  MC_CUDA_CHECK(cudaFuncSetAttribute(chunk_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSharedBytes));
  MC_CUDA_CHECK(cudaFuncSetAttribute(chunk_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSharedBytes));
}

size_t flash_decoding_workspace_floats(const FlashDecodingShape& sh, const FlashDecodingSplit& split) {
  return static_cast<size_t>(sh.batch) * sh.heads * split.splits * (sh.head_dim + 2);
}

void launch_flash_decoding(const FlashDecodingShape& sh, const FlashDecodingSplit& split, const FlashDecodingArgs& io,
                           cudaStream_t stream) {
  const ChunkArgs a{sh, split, io, 1.f / sqrtf(static_cast<float>(sh.head_dim))};
  if (sh.head_dim == 64) launch_chunks<64>(a, stream);
  else launch_chunks<128>(a, stream);
  merge_kernel<<<sh.batch * sh.heads, sh.head_dim, (split.splits + 1) * sizeof(float), stream>>>(sh, split, io.workspace, io.out);
  MC_CUDA_CHECK_LAUNCH();
}

int flash_decoding_blocks_per_sm(const FlashDecodingShape& sh, const FlashDecodingSplit& split) {
  int blocks = 0;
  const size_t bytes = shared_bytes(sh, split);
  if (sh.head_dim == 64) MC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, chunk_kernel<64>, kThreads, bytes));
  else MC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, chunk_kernel<128>, kThreads, bytes));
  return blocks;
}

}  // namespace modelcost::cuda
