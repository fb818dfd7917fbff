// The experts' grouped product on warpgroup tensor cores (wgmma, sm_90a). A block is 64 rows per
// warpgroup (one or two) x 256 columns of one expert; 64-wide K slices of the gathered rows and
// of the expert's weights stream through a 4-deep ring of shared buffers by cp.async, laid out in
// the 128-byte swizzle wgmma reads through its matrix descriptors. Row tiles walk the column
// blocks in groups of 8 so that a wave's rows and weights stay in L2.
#include "llm/expert_gemm_sm90a.h"

#include <cstdint>

#include "core/cuda_check.h"
#include "core/tensor_core.cuh"

namespace modelcost::cuda {
namespace {

constexpr int kSlice = 64;    // K per stage: one 128-byte swizzle row
constexpr int kColumns = 256; // N per block
constexpr int kStages = 4;
constexpr int kGroupRows = 8; // row tiles per raster group

template <int WARPGROUPS>
struct WgmmaTile {
  static constexpr int kRows = 64 * WARPGROUPS, kThreads = 128 * WARPGROUPS;
  static constexpr int kStageBytes = (kRows + kColumns) * 128;
  static constexpr size_t kSharedBytes = size_t(kStages) * kStageBytes + 1024;  // + alignment to 1024
  static constexpr int kAPieces = kRows * 8 / kThreads, kBPieces = kColumns * 8 / kThreads;
};

// Row r's 16-byte chunk c of a K-major tile in the 128-byte swizzle: chunk c ^ (r % 8) of its 128-byte row.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

// A K-major tile in the 128-byte swizzle: 8-row groups 1024 bytes apart (the leading offset unused).
__device__ __forceinline__ uint64_t descriptor(const void* tile) {
  const uint64_t address = smem_address(tile);
  return ((address & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// d (64 x 256 fp32 in the m64nNk16 fragment layout) += A B^T for one k16 step, A and B read from
// shared memory through their descriptors (both K-major); scale_d 0 overwrites d instead.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127 "
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      :
        "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

template <int WARPGROUPS>
__global__ void __launch_bounds__(128 * WARPGROUPS) expert_gemm_wgmma_kernel(ExpertGemmArgs a, int column_blocks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = WgmmaTile<WARPGROUPS>;
  extern __shared__ uint8_t raw_shared[];
  uint8_t* shared = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw_shared) + 1023) & ~uintptr_t(1023));
  // Raster: groups of kGroupRows row tiles, each group walking every column block.
  const int row_tiles = gridDim.x / column_blocks, in_group = kGroupRows * column_blocks;
  const int first = static_cast<int>(blockIdx.x) / in_group * kGroupRows, group = min(row_tiles - first, kGroupRows);
  const int tile = first + static_cast<int>(blockIdx.x) % in_group % group, column_block = static_cast<int>(blockIdx.x) % in_group / group;
  if (tile >= *a.routing.tiles_used) return;
  const int tid = threadIdx.x, chunk = tid % 8;
  const int64_t k = a.k, n = a.n, n0 = int64_t(column_block) * kColumns;
  const __half* a_src[T::kAPieces];
#pragma unroll
  for (int i = 0; i < T::kAPieces; ++i) {
    const int row = (tid + i * T::kThreads) / 8;
    const int pair = a.routing.pair_of_slot[int64_t(tile) * T::kRows + row];
    a_src[i] = pair >= 0 ? a.x + int64_t(pair / a.row_divisor) * k + chunk * 8 : nullptr;
  }
  const int b_row0 = tid / 8;
  const __half* b_src = a.weights + int64_t(a.routing.expert_of_tile[tile]) * n * k + (n0 + b_row0) * k + chunk * 8;
  auto load = [&](int stage, int64_t k0) {
    uint8_t* base = shared + stage * T::kStageBytes;
#pragma unroll
    for (int i = 0; i < T::kAPieces; ++i) {
      const int row = (tid + i * T::kThreads) / 8;
      copy_async16(base + swizzled(row, chunk), a_src[i] ? a_src[i] + k0 : a.x, a_src[i] != nullptr);
    }
#pragma unroll
    for (int i = 0; i < T::kBPieces; ++i) {
      const int row = b_row0 + i * (T::kThreads / 8);
      const bool valid = n0 + row < n;
      copy_async16(base + T::kRows * 128 + swizzled(row, chunk), valid ? b_src + int64_t(i) * (T::kThreads / 8) * k + k0 : a.weights,
                   valid);
    }
  };
  const int slices = static_cast<int>(k / kSlice), warpgroup = tid / 128;
  // Copies run kAhead slices ahead of the products, and one slice's products stay in flight
  // while the next slice's start: a stage is refilled two slices after its products were issued,
  // when every warpgroup has waited for them (wait_group 1, then the barrier).
  constexpr int kAhead = kStages - 2;
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < slices) load(s, int64_t(s) * kSlice);
    commit_copies();
  }
  float acc[128];
  for (int s = 0; s < slices; ++s) {
    wait_copies<kAhead - 1>();
    fence_async_shared();  // the copies (generic proxy) before wgmma's reads (async proxy)
    __syncthreads();
    const uint8_t* stage = shared + (s % kStages) * T::kStageBytes;
    const uint64_t desc_a = descriptor(stage + warpgroup * 64 * 128), desc_b = descriptor(stage + T::kRows * 128);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kSlice / 16; ++kk) wgmma_m64n256k16(acc, desc_a + 2 * kk, desc_b + 2 * kk, s > 0 || kk > 0);
    wgmma_commit();
    const int next = s + kAhead;
    if (next < slices) load(next % kStages, int64_t(next) * kSlice);
    commit_copies();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  wait_copies<0>();
  // Rows g and g + 8 of the warp's 16, columns 2 (lane % 4) and + 1 of each 8-column group.
  const int lane = tid % 32, warp_row = warpgroup * 64 + (tid % 128) / 32 * 16 + lane / 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int pair = a.routing.pair_of_slot[int64_t(tile) * T::kRows + warp_row + 8 * half];
    if (pair < 0) continue;
    __half* y = a.y + int64_t(pair) * n;
#pragma unroll
    for (int j = 0; j < kColumns / 8; ++j) {
      const int64_t col = n0 + 8 * j + 2 * (lane % 4);
      if (col < n) *reinterpret_cast<__half2*>(y + col) = __floats2half2_rn(acc[4 * j + 2 * half], acc[4 * j + 2 * half + 1]);
    }
  }
#endif
}

template <int WARPGROUPS>
void launch_with(const ExpertGemmArgs& a, cudaStream_t stream) {
  using T = WgmmaTile<WARPGROUPS>;
  const auto kernel = expert_gemm_wgmma_kernel<WARPGROUPS>;
  allow_shared_bytes(reinterpret_cast<const void*>(kernel), T::kSharedBytes);
  const int column_blocks = static_cast<int>((a.n + kColumns - 1) / kColumns);
  const unsigned blocks = static_cast<unsigned>(a.shape.tiles() * column_blocks);
  kernel<<<blocks, T::kThreads, T::kSharedBytes, stream>>>(a, column_blocks);
  MC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

bool expert_gemm_wgmma_supported(const ExpertGemmArgs& a) {
  if (a.k % kSlice || (a.shape.tile_rows != 64 && a.shape.tile_rows != 128)) return false;
  int device = 0, major = 0, minor = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
}

void launch_expert_gemm_wgmma(const ExpertGemmArgs& a, cudaStream_t stream) {
  if (a.shape.tile_rows == 128) return launch_with<2>(a, stream);
  launch_with<1>(a, stream);
}

}  // namespace modelcost::cuda
