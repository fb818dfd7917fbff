// Flash attention in fp16 on tensor cores (mma.sync m16n8k16, fp32 accumulation), after
// FlashAttention-2: a block of W warps owns 16 W query rows (16 per warp) and walks the keys in
// tiles of 64, K and V double-buffered in shared memory by cp.async; for grids too small to fill
// the GPU, a block's warps share 16 rows and split the keys instead. Operands reach the tensor
// cores through ldmatrix (V transposed on the way); the scores of a tile stay in registers, where
// the online softmax (running row maximum and sum, base-2 exponentials) turns them into the A
// operand of P V without a trip through shared memory. The S x S scores never leave the chip;
// Q, K, V are read once per query block and O written once. Partial tiles: rows and keys past the
// ends are zero-filled on load and masked to -inf. Values may be narrower than queries and keys
// (dv < d): the kernels take the padded value width DV apart from D, so MLA's prefill (192 and
// 128) stages V and runs P V only 128 wide, and its row blocks fit two to a multiprocessor.
#include <cuda_fp16.h>

#include <algorithm>
#include <utility>

#include "core/cuda_check.h"
#include "core/tensor_core.cuh"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int kKeyTile = 64;
constexpr float kLog2e = 1.4426950408889634f;

// Rows of a shared tile of width D are D + 8 halves apart (Q and K at D, V at DV): the eight
// 16-byte rows an ldmatrix reads fall in different banks.
template <int D> constexpr int row_ld() { return D + 8; }

// `rows` rows of d halves (d <= D, a multiple of 4) from src into rows row_ld<D>() apart, by
// `threads` threads of which this is number `thread`: the first `valid` rows read, the rest and
// the columns past d zeroed, so a head size below the kernel's D adds nothing to the scores and
// its padding columns of the output are never stored. P halves per copy: 8 (16 bytes) or 4.
template <int D, int P>
__device__ void stage_pieces(__half* dst, const __half* src, int rows, int valid, int d, int thread, int threads) {
  constexpr int kPieces = D / P;
  for (int v = thread; v < rows * kPieces; v += threads) {
    const int r = v / kPieces, c = (v % kPieces) * P;
    const bool read = r < valid && c < d;
    const __half* from = read ? src + int64_t(r) * d + c : src;
    if constexpr (P == 8) copy_async16(dst + r * row_ld<D>() + c, from, read);
    else copy_async8(dst + r * row_ld<D>() + c, from, read);
  }
}
template <int D>
__device__ void stage_rows_async(__half* dst, const __half* src, int rows, int valid, int d, int thread, int threads) {
  if (d % 8 == 0) stage_pieces<D, 8>(dst, src, rows, valid, d, thread, threads);
  else stage_pieces<D, 4>(dst, src, rows, valid, d, thread, threads);
}

// Per thread of the mma layout: rows g and g + 8 of its warp's 16, columns 2t and 2t + 1 of each
// 8-wide tile (g = lane / 4, t = lane % 4). Scores of one key tile: 8 tiles of 8 keys.
struct ScoreTile {
  float s[kKeyTile / 8][4];
};

// A thread's two query rows (g and g + 8 of its warp's 16) and their masks (null without a mask
// or past the last query).
struct QueryRows {
  int64_t qi[2];
  const __half* mask_row[2];
  __device__ QueryRows(const AttentionShape& sh, int64_t bh, int64_t first) {
    const int64_t b = bh / sh.heads, h = bh % sh.heads;
    for (int r = 0; r < 2; ++r) {
      qi[r] = first + (threadIdx.x % 32) / 4 + 8 * r;
      mask_row[r] = sh.mask && qi[r] < sh.sq
                        ? static_cast<const __half*>(sh.mask) + b * sh.mask_b + h * sh.mask_h + qi[r] * sh.mask_i
                        : nullptr;
    }
  }
};

// Scores scaled to base 2; where the tile needs it, the mask added and keys past the end (or past
// the diagonal) at -inf.
__device__ __forceinline__ void scale_and_mask(ScoreTile& st, const AttentionShape& sh, int64_t k0, const QueryRows& rows,
                                               float scale2) {
  const int64_t(&qi)[2] = rows.qi;
  const __half* const(&mask_row)[2] = rows.mask_row;
  const int t = threadIdx.x % 4;
  // A whole tile no row of the warp masks: at or below the diagonal of the warp's first row.
  const int64_t warp_first = qi[0] - (threadIdx.x % 32) / 4;
  if (!sh.mask && k0 + kKeyTile <= sh.sk && (!sh.causal || k0 + kKeyTile - 1 <= warp_first + sh.causal_offset)) {
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) st.s[j][e] *= scale2;
    return;
  }
  const int valid = static_cast<int>(std::min<int64_t>(sh.sk - k0, kKeyTile));
#pragma unroll
  for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = j * 8 + 2 * t + (e & 1), r = e >> 1;
      float x = st.s[j][e] * scale2;
      if (c >= valid || (sh.causal && k0 + c > qi[r] + sh.causal_offset)) {
        x = -INFINITY;
      } else if (mask_row[r]) {
        x += kLog2e * __half2float(mask_row[r][(k0 + c) * sh.mask_j]);
      }
      st.s[j][e] = x;
    }
}

// Row blocks of four warps: four per multiprocessor for head dims up to 64 (the compiler would
// otherwise take registers for two only; a few bytes spill). ViT-B/16 at batch 32 on an H100:
// 44.6 us per layer against 49.0 with three blocks. MLA's (192 keys, 128 values): two, as its
// shared memory allows with V staged 128 wide; that still leaves 255 registers (no spills).
template <int D, int DV, int W> constexpr int min_blocks() {
  return W != 4 ? 1 : D <= 64 ? 4 : D == 192 && DV == 128 ? 2 : 1;
}

// S = Q K^T for the warp's 16 rows x 64 keys; K rows are the column fragments of K^T. Key
// chunks of 16 past the `valid` keys of a partial tile are skipped (their scores stay 0, masked).
template <int D>
__device__ __forceinline__ void tile_scores(ScoreTile& st, const uint32_t (&qf)[D / 16][4], const __half* kt, int valid) {
  constexpr int kLd = row_ld<D>();
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int np = 0; np < kKeyTile / 16; ++np) {
      if (np * 16 >= valid) break;
      uint32_t kf[4];
      ldmatrix_x4(kf, kt + (np * 16 + (lane / 16) * 8 + lane % 8) * kLd + kk * 16 + ((lane / 8) & 1) * 8);
      mma16816(st.s[2 * np], qf[kk], kf[0], kf[1]);
      mma16816(st.s[2 * np + 1], qf[kk], kf[2], kf[3]);
    }
}

// The online softmax step: scores become probabilities against the new running maximum, the
// output rows so far are rescaled. A row's four lanes share its maximum; each lane keeps its own
// part of the sum until the end.
template <int DV>
struct RunningRows {  // the warp's output rows so far, with their running maximum and sum
  float out[DV / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
};

template <int DV>
__device__ __forceinline__ void softmax_step(ScoreTile& st, RunningRows<DV>& run) {
  float(&out)[DV / 8][4] = run.out;
  float(&row_max)[2] = run.row_max;
  float(&row_sum)[2] = run.row_sum;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = row_max[r];
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j) m = fmaxf(m, fmaxf(st.s[j][2 * r], st.s[j][2 * r + 1]));
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 1));
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 2));
    const float base = m == -INFINITY ? 0.f : m;
    const float correction = fast_exp2(row_max[r] - base);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        st.s[j][e] = fast_exp2(st.s[j][e] - base);
        sum += st.s[j][e];
      }
    row_sum[r] = row_sum[r] * correction + sum;
    row_max[r] = m;
#pragma unroll
    for (int dn = 0; dn < DV / 8; ++dn) {
      out[dn][2 * r] *= correction;
      out[dn][2 * r + 1] *= correction;
    }
  }
}

// O += P V over the DV columns of the V tile: two 8-key score tiles form one 16-key A fragment;
// V rows load transposed. Only where dv < DV (a value width between the kernel sizes, e.g. 100
// run at 128) do zero-filled columns cost math; they are never stored.
template <int DV>
__device__ __forceinline__ void add_pv(float (&out)[DV / 8][4], const ScoreTile& st, const __half* vt, int valid) {
  constexpr int kLd = row_ld<DV>();
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < kKeyTile / 16; ++kk) {
    if (kk * 16 >= valid) break;
    const uint32_t pf[4] = {pack_halves(st.s[2 * kk][0], st.s[2 * kk][1]), pack_halves(st.s[2 * kk][2], st.s[2 * kk][3]),
                            pack_halves(st.s[2 * kk + 1][0], st.s[2 * kk + 1][1]),
                            pack_halves(st.s[2 * kk + 1][2], st.s[2 * kk + 1][3])};
#pragma unroll
    for (int dp = 0; dp < DV / 16; ++dp) {
      uint32_t vf[4];
      ldmatrix_x4_trans(vf, vt + (kk * 16 + ((lane / 8) & 1) * 8 + lane % 8) * kLd + dp * 16 + (lane / 16) * 8);
      mma16816(out[2 * dp], pf, vf[0], vf[1]);
      mma16816(out[2 * dp + 1], pf, vf[2], vf[3]);
    }
  }
}

// One key tile (K at kt, V at vt: `valid` keys from k0) into the warp's running rows.
template <int D, int DV>
__device__ __forceinline__ void attend_tile(const uint32_t (&qf)[D / 16][4], const __half* kt, const __half* vt, int64_t k0,
                                            int valid, const AttentionShape& sh, const QueryRows& rows, RunningRows<DV>& run) {
  ScoreTile st = {};
  tile_scores<D>(st, qf, kt, valid);
  scale_and_mask(st, sh, k0, rows, sh.scale * kLog2e);
  softmax_step<DV>(st, run);
  add_pv<DV>(run.out, st, vt, valid);
}

// The warp's 16 query rows (staged at qs) as A fragments.
template <int D>
__device__ __forceinline__ void load_query_fragments(uint32_t (&qf)[D / 16][4], const __half* qs) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) ldmatrix_x4(qf[kk], qs + (lane % 16) * row_ld<D>() + kk * 16 + (lane / 16) * 8);
}

// Where query row i of (batch x head) bh is written: [bh, sq, dv], or [b, sq, heads, dv].
__device__ __forceinline__ int64_t out_offset(const AttentionShape& sh, int64_t bh, int64_t i) {
  if (!sh.token_major_out) return (bh * sh.sq + i) * sh.dv;
  return ((bh / sh.heads * sh.sq + i) * sh.heads + bh % sh.heads) * sh.dv;
}

__device__ __forceinline__ int valid_count(int64_t total, int64_t first, int most) {
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(total - first, most)));
}
__device__ __forceinline__ int key_tiles(const AttentionShape& sh, int64_t q_end) {
  const int64_t key_end = sh.causal ? std::min<int64_t>(sh.sk, q_end + sh.causal_offset) : sh.sk;
  return static_cast<int>((key_end + kKeyTile - 1) / kKeyTile);
}

// Row blocks: W warps own 16 W query rows (16 each) and walk all key tiles together, the next
// tile's copies in flight while this one is computed (double buffering).
template <int D, int DV, int W>
__global__ void __launch_bounds__(W * 32, min_blocks<D, DV, W>())
    flash_attention_kernel(const AttentionShape sh, const __half* q, const __half* k, const __half* v, __half* o) {
  constexpr int kLd = row_ld<D>(), kRows = W * 16, kTile = kKeyTile * kLd, kBuffer = kTile + kKeyTile * row_ld<DV>();
  extern __shared__ __align__(128) unsigned char smem[];
  __half* qs = reinterpret_cast<__half*>(smem);
  __half* ks = qs + kRows * kLd;  // buffer i: K at ks + i kBuffer, V right after it
  const int warp = threadIdx.x / 32;
  // Causal: the longest row blocks (the last queries) start first, so the short ones fill the tail.
  const int64_t bh = blockIdx.y, q_block = int64_t(sh.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * kRows;
  const __half* kp = k + bh / sh.group * sh.sk * sh.d;
  const __half* vp = v + bh / sh.group * sh.sk * sh.dv;
  const QueryRows rows(sh, bh, q_block + warp * 16);
  const int tiles = key_tiles(sh, q_block + kRows);
  const bool active = q_block + warp * 16 < sh.sq;  // a warp past the last query only helps stage tiles

  auto stage = [&](int tile, int buffer) {
    const int64_t k0 = int64_t(tile) * kKeyTile;
    const int valid = valid_count(sh.sk, k0, kKeyTile);
    stage_rows_async<D>(ks + buffer * kBuffer, kp + k0 * sh.d, kKeyTile, valid, sh.d, threadIdx.x, W * 32);
    stage_rows_async<DV>(ks + buffer * kBuffer + kTile, vp + k0 * sh.dv, kKeyTile, valid, sh.dv, threadIdx.x, W * 32);
  };
  stage_rows_async<D>(qs, q + (bh * sh.sq + q_block) * sh.d, kRows, valid_count(sh.sq, q_block, kRows), sh.d, threadIdx.x, W * 32);
  if (tiles > 0) stage(0, 0);
  commit_copies();

  uint32_t qf[D / 16][4];
  RunningRows<DV> run;
  for (int tile = 0; tile < tiles; ++tile) {
    const int buffer = tile & 1;
    if (tile + 1 < tiles) {
      stage(tile + 1, buffer ^ 1);
      commit_copies();
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncthreads();
    if (active) {
      if (tile == 0) load_query_fragments<D>(qf, qs + warp * 16 * kLd);
      const int64_t k0 = int64_t(tile) * kKeyTile;
      const __half* kt = ks + buffer * kBuffer;
      attend_tile<D, DV>(qf, kt, kt + kTile, k0, valid_count(sh.sk, k0, kKeyTile), sh, rows, run);
    }
    __syncthreads();  // every warp is done with this buffer before it is refilled
  }
  const int t = threadIdx.x % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = run.row_sum[r];
    sum += __shfl_xor_sync(0xffffffff, sum, 1);
    sum += __shfl_xor_sync(0xffffffff, sum, 2);
    if (rows.qi[r] >= sh.sq) continue;
    const float inverse = sum > 0 ? 1.f / sum : 0.f;
    __half* op = o + out_offset(sh, bh, rows.qi[r]) + 2 * t;
#pragma unroll
    for (int dn = 0; dn < DV / 8; ++dn)
      if (dn * 8 + 2 * t < sh.dv)  // a column pair past the value width is padding (dv is a multiple of 4)
        *reinterpret_cast<__half2*>(op + dn * 8) = __floats2half2_rn(run.out[dn][2 * r] * inverse, run.out[dn][2 * r + 1] * inverse);
  }
}

// Key-split blocks, for grids too small to fill the GPU with row blocks (small batches): W warps
// share 16 query rows and split the keys, warp w taking tiles w, w + W, ...; at the end their
// partial rows (maximum, sum, output) are merged through shared memory.
template <int D, int DV, int W>
__global__ void __launch_bounds__(W * 32)
    flash_attention_split_kernel(const AttentionShape sh, const __half* q, const __half* k, const __half* v, __half* o) {
  constexpr int kLd = row_ld<D>(), kTile = kKeyTile * kLd, kBuffer = kTile + kKeyTile * row_ld<DV>();
  extern __shared__ __align__(128) unsigned char smem[];
  __half* qs = reinterpret_cast<__half*>(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __half* kt = qs + 16 * kLd + warp * kBuffer;  // this warp's K tile, its V tile right after
  const int64_t bh = blockIdx.y, q_block = int64_t(blockIdx.x) * 16;
  const __half* kp = k + bh / sh.group * sh.sk * sh.d;
  const __half* vp = v + bh / sh.group * sh.sk * sh.dv;
  const QueryRows rows(sh, bh, q_block);
  const int tiles = key_tiles(sh, q_block + 16);

  stage_rows_async<D>(qs, q + (bh * sh.sq + q_block) * sh.d, 16, valid_count(sh.sq, q_block, 16), sh.d, threadIdx.x, W * 32);
  commit_copies();
  wait_copies<0>();
  __syncthreads();
  uint32_t qf[D / 16][4];
  load_query_fragments<D>(qf, qs);
  RunningRows<DV> run;
  for (int tile = warp; tile < tiles; tile += W) {
    const int64_t k0 = int64_t(tile) * kKeyTile;
    const int valid = valid_count(sh.sk, k0, kKeyTile);
    stage_rows_async<D>(kt, kp + k0 * sh.d, kKeyTile, valid, sh.d, lane, 32);
    stage_rows_async<DV>(kt + kTile, vp + k0 * sh.dv, kKeyTile, valid, sh.dv, lane, 32);
    commit_copies();
    wait_copies<0>();
    __syncwarp();
    attend_tile<D, DV>(qf, kt, kt + kTile, k0, valid, sh, rows, run);
    __syncwarp();  // the warp is done with its tiles before they are refilled
  }
  // Merge: the tile area becomes [W][16][DV] partial outputs, then [W][16] maxima and sums.
  __syncthreads();
  float* part_out = reinterpret_cast<float*>(qs + 16 * kLd);
  float* part_max = part_out + W * 16 * DV;
  float* part_sum = part_max + W * 16;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = run.row_sum[r];
    sum += __shfl_xor_sync(0xffffffff, sum, 1);
    sum += __shfl_xor_sync(0xffffffff, sum, 2);
    const int row = warp * 16 + g + 8 * r;
    if (t == 0) {
      part_max[row] = run.row_max[r];
      part_sum[row] = sum;
    }
#pragma unroll
    for (int dn = 0; dn < DV / 8; ++dn) {
      part_out[row * DV + dn * 8 + 2 * t] = run.out[dn][2 * r];
      part_out[row * DV + dn * 8 + 2 * t + 1] = run.out[dn][2 * r + 1];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 16 * DV; i += W * 32) {
    const int row = i / DV, col = i % DV;
    if (q_block + row >= sh.sq) break;  // later rows are past the end too
    if (col >= sh.dv) continue;          // padding columns past the value width
    float m = -INFINITY;
    for (int w = 0; w < W; ++w) m = fmaxf(m, part_max[w * 16 + row]);
    const float base = m == -INFINITY ? 0.f : m;
    float sum = 0.f, acc = 0.f;
    for (int w = 0; w < W; ++w) {
      const float weight = fast_exp2(part_max[w * 16 + row] - base);
      sum += part_sum[w * 16 + row] * weight;
      acc += part_out[(w * 16 + row) * DV + col] * weight;
    }
    o[out_offset(sh, bh, q_block + row) + col] = __float2half_rn(sum > 0 ? acc / sum : 0.f);
  }
}

int multiprocessors() {
  static const int count = [] {
    int device = 0, sms = 0;
    MC_CUDA_CHECK(cudaGetDevice(&device));
    MC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

template <int D, int DV, int W, bool Split>
void launch_with(const AttentionShape& s, const void* q, const void* k, const void* v, void* o, cudaStream_t stream) {
  constexpr int kRows = Split ? 16 : W * 16, kTiles = (Split ? W : 2) * kKeyTile;  // of K, and as many of V
  constexpr size_t bytes = (size_t(kRows + kTiles) * row_ld<D>() + size_t(kTiles) * row_ld<DV>()) * sizeof(__half);
  // 192 (DV 192): 128000 bytes for row blocks, 108800 and 211200 for key-split ones of two and four
  // warps. DV 128: 111616 (two row blocks per H100 multiprocessor with the 1 KB each reserves),
  // 92416 and 178432.
  static_assert(bytes <= 227 * 1024, "past the shared memory a Hopper block may opt in to");
  const auto kernel = [] {
    if constexpr (Split) {
      return flash_attention_split_kernel<D, DV, W>;
    } else {
      return flash_attention_kernel<D, DV, W>;
    }
  }();
  allow_shared_bytes(reinterpret_cast<const void*>(kernel), bytes);
  const dim3 grid(static_cast<unsigned>((s.sq + kRows - 1) / kRows), static_cast<unsigned>(s.bh));
  kernel<<<grid, W * 32, bytes, stream>>>(s, static_cast<const __half*>(q), static_cast<const __half*>(k),
                                          static_cast<const __half*>(v), static_cast<__half*>(o));
  MC_CUDA_CHECK(cudaGetLastError());
}

// Row blocks of four warps (64 query rows) where they fill at least half the multiprocessors;
// key-split blocks of 16 rows otherwise (ViT-B/16 at batch 1: 156 blocks, each warp one key tile,
// instead of 48 blocks walking all four), with two warps where the keys are two tiles or fewer.
// Between half and one wave the row blocks win: a chunk of 256 tokens after 512 over 32 heads
// (128 row blocks on 132 SMs) took 87 us as 512 split blocks.
template <int D, int DV = D>
void launch_for(const AttentionShape& s, const void* q, const void* k, const void* v, void* o, cudaStream_t stream) {
  if (2 * ((s.sq + 63) / 64) * s.bh >= multiprocessors()) {
    launch_with<D, DV, 4, false>(s, q, k, v, o, stream);
  } else if (s.sk <= 2 * kKeyTile) {
    launch_with<D, DV, 2, true>(s, q, k, v, o, stream);
  } else {
    launch_with<D, DV, 4, true>(s, q, k, v, o, stream);
  }
}

}  // namespace

void launch_flash_attention(const AttentionShape& shape, const void* q, const void* k, const void* v, void* o,
                            cudaStream_t stream) {
  AttentionShape s = shape;
  if (s.dv == 0) s.dv = s.d;
  const bool wide = flash_attention_wide_head_size(s.d);  // MLA's 192: the LLM step's prefill only
  if (!(flash_attention_head_size(s.d) || wide) || s.dv < 4 || s.dv > s.d || s.dv % 4 != 0)
    throw Error(kExitRuntime, "flash attention: query/key head dim " + std::to_string(s.d) + ", value head dim " +
                                  std::to_string(s.dv) + " (multiples of 4 up to 192 run, values no wider than keys)");
  // The kernel of the next head size it is built for; the columns past d (and past dv) are zero-filled.
  // Wide keys with values up to 128 (MLA) get V 128 wide rather than padded to 192.
  switch (wide ? 192 : flash_attention_padded_head_size(s.d)) {
    case 32: launch_for<32>(s, q, k, v, o, stream); break;
    case 64: launch_for<64>(s, q, k, v, o, stream); break;
    case 128: launch_for<128>(s, q, k, v, o, stream); break;
    default:
      if (s.dv <= 128) launch_for<192, 128>(s, q, k, v, o, stream);
      else launch_for<192>(s, q, k, v, o, stream);
      break;
  }
}

}  // namespace modelcost::cuda
