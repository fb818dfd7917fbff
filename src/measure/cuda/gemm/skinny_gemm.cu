// Kernel of skinny_gemm.h. mma.sync m16n8k16: the weight's 16 rows are the A operand, 8 batch
// rows of x the B operand. A dot product does not care in which order K is summed, so each
// thread loads one 16-byte piece (8 consecutive k) of its rows and feeds it to two k-steps as if
// the k were interleaved as the fragments want; x is read with the same permutation.
#include <cstdint>

#include "core/cuda_check.h"
#include "gemm/skinny_gemm.h"

namespace modelcost::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kUnroll = 8;  // 32-wide k chunks per loop trip: 16 weight loads in flight per thread

__device__ __forceinline__ void mma(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Both k-steps of one 32-wide chunk: low/high are the pieces of weight rows g and g + 8.
__device__ __forceinline__ void mma_chunk(float (&c)[4], const uint4& low, const uint4& high, const uint4& x) {
  mma(c, low.x, high.x, low.y, high.y, x.x, x.y);
  mma(c, low.z, high.z, low.w, high.w, x.z, x.w);
}

__device__ __forceinline__ uint4 load_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Block: 16 outputs; warp w: chunks [w, w+1) * chunks / kWarps of K; tiles: ceil(m / 8). One
// block per SM is enough to stream: the bound lets ptxas keep every load of a trip in registers
// (with its default occupancy target it issues them two at a time, each just before its use).
template <int Tiles>
__global__ void __launch_bounds__(kWarps * 32, 1) skinny_gemm_kernel(SkinnyGemmArgs a) {
  __shared__ float partial[kWarps][Tiles * 4][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * 16;
  const int chunks = a.k / 32, begin = chunks * warp / kWarps, end = chunks * (warp + 1) / kWarps;
  // Piece t of chunk c sits at k = 32c + 8t: uint4 index 4c + t of the row.
  const int last = a.n - 1;  // rows past n (the last block's) read the last row, their sums unstored
  const uint4* w_low = reinterpret_cast<const uint4*>(a.w + static_cast<int64_t>(min(row0 + g, last)) * a.k) + t;
  const uint4* w_high = reinterpret_cast<const uint4*>(a.w + static_cast<int64_t>(min(row0 + g + 8, last)) * a.k) + t;
  const uint4* x_row[Tiles];
  bool x_live[Tiles];
#pragma unroll
  for (int i = 0; i < Tiles; ++i) {
    const int r = i * 8 + g;
    x_live[i] = r < a.m;
    x_row[i] = reinterpret_cast<const uint4*>(a.x + static_cast<int64_t>(x_live[i] ? r : 0) * a.k) + t;
  }
  float acc[Tiles][4] = {};
  const uint4 zero = make_uint4(0, 0, 0, 0);
  // kUnroll chunks per trip, all loads issued before any is used (no branch between them). Chunks
  // past the warp's end reload its last one (from L2) and multiply it by zeros, so a K that does
  // not divide evenly costs no extra serial trip.
  for (int c = begin; c < end; c += kUnroll) {
    uint4 low[kUnroll], high[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int at = 4 * min(c + u, end - 1);
      low[u] = load_stream(w_low + at);
      high[u] = load_stream(w_high + at);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const bool live = c + u < end;
#pragma unroll
      for (int i = 0; i < Tiles; ++i) mma_chunk(acc[i], low[u], high[u], live && x_live[i] ? __ldg(x_row[i] + 4 * (c + u)) : zero);
    }
  }
#pragma unroll
  for (int i = 0; i < Tiles; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) partial[warp][i * 4 + e][lane] = acc[i][e];
  __syncthreads();
  // Accumulator e of lane (g, t) in tile i: output row0 + g (+8 for e >= 2), batch row 8i + 2t (+1 for odd e).
  for (int slot = threadIdx.x; slot < Tiles * 4 * 32; slot += kWarps * 32) {
    const int l = slot % 32, ie = slot / 32, i = ie / 4, e = ie % 4;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += partial[w][ie][l];
    const int out = row0 + l / 4 + (e >= 2 ? 8 : 0), row = i * 8 + 2 * (l % 4) + (e & 1);
    if (row >= a.m || out >= a.n) continue;
    __half* y = a.y + static_cast<int64_t>(row) * a.n + out;
    if (a.bias) sum += __half2float(a.bias[out]);
    if (a.accumulate) sum += __half2float(*y);
    *y = __float2half(sum);
  }
}

}  // namespace

bool skinny_gemm_supports(const SkinnyGemmArgs& a) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return a.m >= 1 && a.m <= kSkinnyMaxRows && a.n > 0 && a.k > 0 && a.k % 32 == 0 && aligned(a.x) && aligned(a.w) &&
         aligned(a.y);
}

void launch_skinny_gemm(const SkinnyGemmArgs& a, cudaStream_t stream) {
  const dim3 grid((a.n + 15) / 16), block(kWarps * 32);
  switch ((a.m + 7) / 8) {
    case 1: skinny_gemm_kernel<1><<<grid, block, 0, stream>>>(a); break;
    case 2: skinny_gemm_kernel<2><<<grid, block, 0, stream>>>(a); break;
    case 3: skinny_gemm_kernel<3><<<grid, block, 0, stream>>>(a); break;
    default: skinny_gemm_kernel<4><<<grid, block, 0, stream>>>(a); break;
  }
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
