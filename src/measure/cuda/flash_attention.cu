// Flash attention in fp16 on tensor cores (WMMA 16x16x16, fp32 accumulation): a block of four
// warps owns 64 query rows (16 per warp) and walks the keys in tiles of 64 staged in shared
// memory. Per tile each warp computes its 16 x 64 scores, updates the running row maximum and
// sum (online softmax, two lanes per row), rescales its output rows held in registers and adds
// P V. The S x S scores never leave the chip; Q, K, V are read once per query block and O
// written once.
#include <mma.h>

#include <algorithm>

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/fused_kernels.h"

namespace modelcost::cuda {
namespace {

using namespace nvcuda;

constexpr int kWarps = 4, kRowsPerWarp = 16, kKeyTile = 64;

// Leading dims are padded (4 floats, 8 halves) so the rows of a tile fall in different banks.
template <int D> struct Layout {
  static constexpr int kKvLd = D + 8;                                   // K, V tiles (halves)
  static constexpr int kScoreLd = kKeyTile + 4, kOutLd = D + 4;         // float scratch
  static constexpr int kHalfLd = (D > kKeyTile ? D : kKeyTile) + 8;     // P (and Q staging), halves
  static constexpr int kFloatCols = kScoreLd > kOutLd ? kScoreLd : kOutLd;
  static constexpr size_t kKv = size_t(kKeyTile) * kKvLd * sizeof(__half);
  static constexpr size_t kFloat = size_t(kRowsPerWarp) * kFloatCols * sizeof(float);
  static constexpr size_t kHalf = size_t(kRowsPerWarp) * kHalfLd * sizeof(__half);
  static constexpr size_t bytes() { return 4 * kKv + kWarps * (kFloat + kHalf); }  // K, V double-buffered
};

__device__ __forceinline__ int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

// One 16-byte asynchronous copy global -> shared; zero-filled (nothing read) when !valid.
__device__ __forceinline__ void copy_async16(void* dst, const void* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_copies() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// A key tile of K or V (`valid` rows of D halves from src) staged asynchronously, rows `ld` apart.
template <int D>
__device__ void stage_tile_async(__half* dst, int ld, const __half* src, int valid) {
  constexpr int kVec = D / 8;
  for (int v = threadIdx.x; v < kKeyTile * kVec; v += kWarps * 32) {
    const int r = v / kVec, c = (v % kVec) * 8;
    copy_async16(dst + r * ld + c, r < valid ? src + int64_t(r) * D + c : src, r < valid);
  }
}

// 16-byte copies of `rows` rows of D halves from global into rows `ld` apart (rows past `valid` zeroed).
template <int D>
__device__ void stage_rows(__half* dst, int ld, const __half* src, int rows, int valid, int lane, int lanes) {
  constexpr int kVec = D / 8;  // 8 halves per 16 bytes
  for (int v = lane; v < rows * kVec; v += lanes) {
    const int r = v / kVec, c = (v % kVec) * 8;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (r < valid) value = *reinterpret_cast<const uint4*>(src + int64_t(r) * D + c);
    *reinterpret_cast<uint4*>(dst + r * ld + c) = value;
  }
}

template <int D>
__global__ void __launch_bounds__(kWarps * 32) flash_attention_kernel(const AttentionShape s, const __half* q,
                                                                      const __half* k, const __half* v, __half* o) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  // Buffer b holds K at smem + 2 b kKv and V right after it.
  auto kbuf = [&](int b) { return reinterpret_cast<__half*>(smem + 2 * b * L::kKv); };
  auto vbuf = [&](int b) { return reinterpret_cast<__half*>(smem + (2 * b + 1) * L::kKv); };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* scratch = reinterpret_cast<float*>(smem + 4 * L::kKv + warp * (L::kFloat + L::kHalf));
  __half* ph = reinterpret_cast<__half*>(reinterpret_cast<unsigned char*>(scratch) + L::kFloat);

  const int64_t bh = blockIdx.y, kv_head = bh / s.group;
  const int64_t b = bh / s.heads, h = bh % s.heads;
  const int64_t q0 = int64_t(blockIdx.x) * kWarps * kRowsPerWarp + warp * kRowsPerWarp;
  const __half* qp = q + (bh * s.sq + q0) * D;
  const __half* kp = k + kv_head * s.sk * D;
  const __half* vp = v + kv_head * s.sk * D;

  // Q rows of this warp as A fragments (staged through the half scratch).
  stage_rows<D>(ph, L::kHalfLd, qp, kRowsPerWarp, static_cast<int>(clamp64(s.sq - q0, 0, kRowsPerWarp)), lane, 32);
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qf[D / 16];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) wmma::load_matrix_sync(qf[kk], ph + kk * 16, L::kHalfLd);

  const int row = lane / 2, half_lane = lane % 2;
  const int64_t qi = q0 + row;
  float out[D / 2];
#pragma unroll
  for (int j = 0; j < D / 2; ++j) out[j] = 0.f;
  float row_max = -INFINITY, row_sum = 0.f;

  int64_t key_end = s.sk;
  if (s.causal) key_end = clamp64(int64_t(blockIdx.x + 1) * kWarps * kRowsPerWarp, 0, s.sk);
  // The next key tile's copies run while this one is computed (double buffering).
  auto stage = [&](int64_t k0, int buffer) {
    const int valid = static_cast<int>(clamp64(s.sk - k0, 0, kKeyTile));
    stage_tile_async<D>(kbuf(buffer), L::kKvLd, kp + k0 * D, valid);
    stage_tile_async<D>(vbuf(buffer), L::kKvLd, vp + k0 * D, valid);
    commit_copies();
  };
  stage(0, 0);
  int buffer = 0;
  for (int64_t k0 = 0; k0 < key_end; k0 += kKeyTile, buffer ^= 1) {
    if (k0 + kKeyTile < key_end) {
      stage(k0 + kKeyTile, buffer ^ 1);
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncthreads();
    const __half* ks = kbuf(buffer);
    const __half* vs = vbuf(buffer);
    // Scores: 16 x 64 = Q (16 x D) K^T (D x 64).
#pragma unroll
    for (int nt = 0; nt < kKeyTile / 16; ++nt) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, ks + nt * 16 * L::kKvLd + kk * 16, L::kKvLd);
        wmma::mma_sync(acc, qf[kk], kf, acc);
      }
      wmma::store_matrix_sync(scratch + nt * 16, acc, L::kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();
    // Online softmax: two lanes per row, 32 keys each.
    float tile_max = -INFINITY;
    float score[kKeyTile / 2];
#pragma unroll
    for (int j = 0; j < kKeyTile / 2; ++j) {
      const int c = half_lane + 2 * j;
      const int64_t kj = k0 + c;
      float x = scratch[row * L::kScoreLd + c] * s.scale;
      if (s.mask && kj < s.sk && qi < s.sq)
        x += __half2float(static_cast<const __half*>(s.mask)[b * s.mask_b + h * s.mask_h + qi * s.mask_i + kj * s.mask_j]);
      if (kj >= s.sk || (s.causal && kj > qi)) x = -INFINITY;
      score[j] = x;
      tile_max = fmaxf(tile_max, x);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffff, tile_max, 1));
    const float new_max = fmaxf(row_max, tile_max);
    const float base = new_max == -INFINITY ? 0.f : new_max;
    const float correction = __expf(row_max - base);
    float tile_sum = 0.f;
#pragma unroll
    for (int j = 0; j < kKeyTile / 2; ++j) {
      const float p = __expf(score[j] - base);
      tile_sum += p;
      ph[row * L::kHalfLd + half_lane + 2 * j] = __float2half_rn(p);
    }
    tile_sum += __shfl_xor_sync(0xffffffff, tile_sum, 1);
    row_sum = row_sum * correction + tile_sum;
    row_max = new_max;
    __syncwarp();
    // P V: 16 x D = P (16 x 64) V (64 x D), into the float scratch, then added to the rows.
#pragma unroll
    for (int nt = 0; nt < D / 16; ++nt) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kKeyTile / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> vf;
        wmma::load_matrix_sync(pf, ph + kk * 16, L::kHalfLd);
        wmma::load_matrix_sync(vf, vs + kk * 16 * L::kKvLd + nt * 16, L::kKvLd);
        wmma::mma_sync(acc, pf, vf, acc);
      }
      wmma::store_matrix_sync(scratch + nt * 16, acc, L::kOutLd, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < D / 2; ++j) out[j] = out[j] * correction + scratch[row * L::kOutLd + half_lane + 2 * j];
    __syncthreads();  // every warp is done with this buffer before it is refilled
  }
  if (qi >= s.sq) return;
  const float inverse = row_sum > 0 ? 1.f / row_sum : 0.f;
  __half* op = o + (bh * s.sq + qi) * D + half_lane;
#pragma unroll
  for (int j = 0; j < D / 2; ++j) op[2 * j] = __float2half_rn(out[j] * inverse);
}

template <int D>
void launch_for(const AttentionShape& s, const void* q, const void* k, const void* v, void* o, cudaStream_t stream) {
  const size_t bytes = Layout<D>::bytes();
  static const cudaError_t configured =
      cudaFuncSetAttribute(flash_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  MC_CUDA_CHECK(configured);
  const dim3 grid(static_cast<unsigned>((s.sq + kWarps * kRowsPerWarp - 1) / (kWarps * kRowsPerWarp)),
                  static_cast<unsigned>(s.bh));
  flash_attention_kernel<D><<<grid, kWarps * 32, bytes, stream>>>(s, static_cast<const __half*>(q), static_cast<const __half*>(k),
                                                                  static_cast<const __half*>(v), static_cast<__half*>(o));
  MC_CUDA_CHECK(cudaGetLastError());
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
