// Flash attention in fp16 on tensor cores (mma.sync m16n8k16, fp32 accumulation), after
// FlashAttention-2: a block of W warps owns 16 W query rows (16 per warp) and walks the keys in
// tiles of 64, K and V double-buffered in shared memory by cp.async. Operands reach the tensor
// cores through ldmatrix (V transposed on the way); the scores of a tile stay in registers, where
// the online softmax (running row maximum and sum, base-2 exponentials) turns them into the A
// operand of P V without a trip through shared memory. The S x S scores never leave the chip;
// Q, K, V are read once per query block and O written once. Partial tiles: rows and keys past the
// ends are zero-filled on load and masked to -inf.
#include <cuda_fp16.h>

#include <algorithm>

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/fused_kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int kKeyTile = 64;
constexpr float kLog2e = 1.4426950408889634f;

// Rows of every shared tile are D + 8 halves apart: the eight 16-byte rows an ldmatrix reads fall
// in different banks.
template <int D> constexpr int row_ld() { return D + 8; }
template <int D, int W> constexpr size_t smem_bytes() {
  return size_t(W * 16 + 4 * kKeyTile) * row_ld<D>() * sizeof(__half);  // Q, then K and V twice
}

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// One 16-byte asynchronous copy global -> shared; zero-filled (nothing read) when !valid.
__device__ __forceinline__ void copy_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_copies() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_address(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_address(p)));
}
// c += a b for one 16 x 8 tile (a: 16 x 16 row-major fragment, b: 16 x 8 column fragment).
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_halves(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// `rows` rows of D halves from src (the first `valid` of them read, the rest zeroed), rows `ld` apart.
template <int D, int Threads>
__device__ void stage_rows_async(__half* dst, const __half* src, int rows, int valid) {
  constexpr int kVec = D / 8;  // 16-byte pieces per row
  for (int v = threadIdx.x; v < rows * kVec; v += Threads) {
    const int r = v / kVec, c = (v % kVec) * 8;
    copy_async16(dst + r * row_ld<D>() + c, r < valid ? src + int64_t(r) * D + c : src, r < valid);
  }
}

// Per thread of the mma layout: rows g and g + 8 of its warp's 16, columns 2t and 2t + 1 of each
// 8-wide tile (g = lane / 4, t = lane % 4). Scores of one key tile: 8 tiles of 8 keys.
struct ScoreTile {
  float s[kKeyTile / 8][4];
};

// Scores scaled to base 2, the mask added, keys past the end (or the diagonal) at -inf.
__device__ __forceinline__ void mask_scores(ScoreTile& st, const AttentionShape& sh, int64_t k0, const int64_t (&qi)[2],
                                            int64_t b, int64_t h, float scale2) {
  const int t = threadIdx.x % 4;
  const __half* mask = static_cast<const __half*>(sh.mask);
#pragma unroll
  for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t kj = k0 + j * 8 + 2 * t + (e & 1), q = qi[e >> 1];
      float x = st.s[j][e] * scale2;
      if (mask && kj < sh.sk && q < sh.sq)
        x += kLog2e * __half2float(mask[b * sh.mask_b + h * sh.mask_h + q * sh.mask_i + kj * sh.mask_j]);
      if (kj >= sh.sk || (sh.causal && kj > q)) x = -INFINITY;
      st.s[j][e] = x;
    }
}

template <int D, int W>
__global__ void __launch_bounds__(W * 32) flash_attention_kernel(const AttentionShape sh, const __half* q, const __half* k,
                                                                 const __half* v, __half* o) {
  constexpr int kLd = row_ld<D>(), kRows = W * 16, kTile = kKeyTile * kLd;
  extern __shared__ __align__(128) unsigned char smem[];
  __half* qs = reinterpret_cast<__half*>(smem);
  __half* ks = qs + kRows * kLd;  // buffer i: K at ks + 2 i kTile, V right after it
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

  const int64_t bh = blockIdx.y, kv_head = bh / sh.group, b = bh / sh.heads, h = bh % sh.heads;
  const int64_t q_block = int64_t(blockIdx.x) * kRows;
  const __half* kp = k + kv_head * sh.sk * D;
  const __half* vp = v + kv_head * sh.sk * D;
  const int64_t qi[2] = {q_block + warp * 16 + g, q_block + warp * 16 + g + 8};
  const int64_t key_end = sh.causal ? std::min<int64_t>(sh.sk, q_block + kRows) : sh.sk;
  const int tiles = static_cast<int>((key_end + kKeyTile - 1) / kKeyTile);

  auto stage = [&](int tile, int buffer) {
    const int64_t k0 = int64_t(tile) * kKeyTile;
    const int valid = static_cast<int>(std::min<int64_t>(sh.sk - k0, kKeyTile));
    stage_rows_async<D, W * 32>(ks + 2 * buffer * kTile, kp + k0 * D, kKeyTile, valid);
    stage_rows_async<D, W * 32>(ks + (2 * buffer + 1) * kTile, vp + k0 * D, kKeyTile, valid);
  };
  stage_rows_async<D, W * 32>(qs, q + (bh * sh.sq + q_block) * D, kRows,
                              static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(sh.sq - q_block, kRows))));
  if (tiles > 0) stage(0, 0);
  commit_copies();

  uint32_t qf[D / 16][4];
  float out[D / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
  const float scale2 = sh.scale * kLog2e;
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
    if (tile == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) ldmatrix_x4(qf[kk], qs + (warp * 16 + lane % 16) * kLd + kk * 16 + (lane / 16) * 8);
    }
    const __half* kt = ks + 2 * buffer * kTile;
    const __half* vt = kt + kTile;
    // Scores S = Q K^T for 16 rows x 64 keys; K rows are the column fragments of K^T.
    ScoreTile st = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int np = 0; np < kKeyTile / 16; ++np) {
        uint32_t kf[4];
        ldmatrix_x4(kf, kt + (np * 16 + (lane / 16) * 8 + lane % 8) * kLd + kk * 16 + ((lane / 8) & 1) * 8);
        mma16816(st.s[2 * np], qf[kk], kf[0], kf[1]);
        mma16816(st.s[2 * np + 1], qf[kk], kf[2], kf[3]);
      }
    mask_scores(st, sh, int64_t(tile) * kKeyTile, qi, b, h, scale2);
    // Online softmax; a row's four lanes share its maximum (the sum stays per lane until the end).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float m = row_max[r];
#pragma unroll
      for (int j = 0; j < kKeyTile / 8; ++j) m = fmaxf(m, fmaxf(st.s[j][2 * r], st.s[j][2 * r + 1]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 1));
      m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 2));
      const float base = m == -INFINITY ? 0.f : m;
      const float correction = exp2f(row_max[r] - base);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          st.s[j][e] = exp2f(st.s[j][e] - base);
          sum += st.s[j][e];
        }
      row_sum[r] = row_sum[r] * correction + sum;
      row_max[r] = m;
#pragma unroll
      for (int dn = 0; dn < D / 8; ++dn) {
        out[dn][2 * r] *= correction;
        out[dn][2 * r + 1] *= correction;
      }
    }
    // O += P V: two 8-key score tiles form one 16-key A fragment; V rows load transposed.
#pragma unroll
    for (int kk = 0; kk < kKeyTile / 16; ++kk) {
      const uint32_t pf[4] = {pack_halves(st.s[2 * kk][0], st.s[2 * kk][1]), pack_halves(st.s[2 * kk][2], st.s[2 * kk][3]),
                              pack_halves(st.s[2 * kk + 1][0], st.s[2 * kk + 1][1]),
                              pack_halves(st.s[2 * kk + 1][2], st.s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t vf[4];
        ldmatrix_x4_trans(vf, vt + (kk * 16 + ((lane / 8) & 1) * 8 + lane % 8) * kLd + dp * 16 + (lane / 16) * 8);
        mma16816(out[2 * dp], pf, vf[0], vf[1]);
        mma16816(out[2 * dp + 1], pf, vf[2], vf[3]);
      }
    }
    __syncthreads();  // every warp is done with this buffer before it is refilled
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffff, sum, 1);
    sum += __shfl_xor_sync(0xffffffff, sum, 2);
    if (qi[r] >= sh.sq) continue;
    const float inverse = sum > 0 ? 1.f / sum : 0.f;
    __half* op = o + (bh * sh.sq + qi[r]) * D + 2 * t;
#pragma unroll
    for (int dn = 0; dn < D / 8; ++dn)
      *reinterpret_cast<__half2*>(op + dn * 8) = __floats2half2_rn(out[dn][2 * r] * inverse, out[dn][2 * r + 1] * inverse);
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

template <int D, int W>
void launch_with(const AttentionShape& s, const void* q, const void* k, const void* v, void* o, cudaStream_t stream) {
  constexpr size_t bytes = smem_bytes<D, W>();
  static const cudaError_t configured =
      cudaFuncSetAttribute(flash_attention_kernel<D, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  MC_CUDA_CHECK(configured);
  const dim3 grid(static_cast<unsigned>((s.sq + W * 16 - 1) / (W * 16)), static_cast<unsigned>(s.bh));
  flash_attention_kernel<D, W><<<grid, W * 32, bytes, stream>>>(s, static_cast<const __half*>(q), static_cast<const __half*>(k),
                                                                static_cast<const __half*>(v), static_cast<__half*>(o));
  MC_CUDA_CHECK(cudaGetLastError());
}

// Four warps (64 query rows) per block where that fills every multiprocessor; one warp per block
// for small batches, where 64-row blocks would leave most of the GPU idle.
template <int D>
void launch_for(const AttentionShape& s, const void* q, const void* k, const void* v, void* o, cudaStream_t stream) {
  const int64_t wide_blocks = (s.sq + 63) / 64 * s.bh;
  if (wide_blocks >= multiprocessors()) {
    launch_with<D, 4>(s, q, k, v, o, stream);
  } else {
    launch_with<D, 1>(s, q, k, v, o, stream);
  }
}

}  // namespace

void launch_flash_attention(const AttentionShape& shape, const void* q, const void* k, const void* v, void* o,
                            cudaStream_t stream) {
  switch (shape.d) {
    case 32: launch_for<32>(shape, q, k, v, o, stream); break;
    case 64: launch_for<64>(shape, q, k, v, o, stream); break;
    case 128: launch_for<128>(shape, q, k, v, o, stream); break;
    default: throw Error(kExitRuntime, "flash attention: head dim " + std::to_string(shape.d) + " (32, 64 or 128 run)");
  }
}

}  // namespace modelcost::cuda
