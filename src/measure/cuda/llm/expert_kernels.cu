// The routed experts' kernels (expert_kernels.h). The grouped product is a tiled tensor-core GEMM
// (mma.sync m16n8k16, fp32 accumulation, operands staged by cp.async in a 3-4 deep ring of
// K slices): block (tile, column block) finds its expert from the sort and gathers its
// rows through pair_of_slot; blocks past the tiles the routing used return at once. Tiles of 16
// rows for a decode's few pairs per expert (weight streaming), 64 and 128 for a prefill's many
// (on an H100 or H200 those run on the warpgroup tensor cores: expert_gemm_sm90a.cu).
#include "llm/expert_kernels.h"

#include <cfloat>

#include "core/cuda_check.h"
#include "core/tensor_core.cuh"
#include "llm/expert_gemm_sm90a.h"

namespace modelcost::cuda {
namespace {

constexpr int kPerLane = kMostExperts / 32;

// One warp per row: softmax over the experts, then k rounds of a warp argmax (ties to the lower
// expert); lane j keeps the j-th choice and writes it, its weight renormalised over the k.
__global__ void top_k_routing_kernel(const __half* scores, int64_t stride, ExpertRoutingShape shape, ExpertRouting r) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32, experts = static_cast<int>(shape.experts), k = static_cast<int>(shape.top_k);
  if (row >= shape.rows) return;
  float p[kPerLane];
  float top = -FLT_MAX;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int e = lane + 32 * i;
    p[i] = e < experts ? __half2float(scores[row * stride + e]) + routing_draw(row, e) : -FLT_MAX;
    top = fmaxf(top, p[i]);
  }
  for (int o = 16; o > 0; o /= 2) top = fmaxf(top, __shfl_xor_sync(0xffffffff, top, o));
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    p[i] = lane + 32 * i < experts ? __expf(p[i] - top) : -1.f;
    sum += fmaxf(p[i], 0.f);
  }
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
  int mine = -1;
  float mine_p = 0.f, chosen = 0.f;
  for (int j = 0; j < k; ++j) {
    float best = -1.f;
    int best_e = 0x7fffffff;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      if (p[i] > best) {
        best = p[i];
        best_e = lane + 32 * i;
      }
    for (int o = 16; o > 0; o /= 2) {
      const float other = __shfl_xor_sync(0xffffffff, best, o);
      const int other_e = __shfl_xor_sync(0xffffffff, best_e, o);
      if (other > best || (other == best && other_e < best_e)) {
        best = other;
        best_e = other_e;
      }
    }
    if (best_e % 32 == lane) p[best_e / 32] = -1.f;  // taken
    if (lane == j) {
      mine = best_e;
      mine_p = best;
    }
    chosen += best;
  }
  if (lane < k) {
    r.expert_of_pair[row * k + lane] = mine;
    r.weight_of_pair[row * k + lane] = chosen > 0 ? mine_p / chosen : 1.f / k;
  }
  (void)sum;  // the weights are renormalised over the k chosen: the full sum cancels
}

// Lanes of a warp that hold the same expert add to its counter once (the leader, for them all):
// a few experts' counters otherwise take thousands of atomics each. Returns this lane's place
// among them after the value the counter had (valid lanes only).
__device__ __forceinline__ int add_by_expert(int* counters, int expert, bool valid) {
  const unsigned same = __match_any_sync(0xffffffff, valid ? expert : -1);
  const int lane = threadIdx.x % 32, leader = __ffs(same) - 1;
  int base = 0;
  if (valid && lane == leader) base = atomicAdd(&counters[expert], __popc(same));
  base = __shfl_sync(0xffffffff, base, leader);
  return base + __popc(same & ((1u << lane) - 1));
}

// One block: each expert's pairs counted, their slots laid out expert after expert (each padded
// to whole tiles; a scan by the first warp), every tile told its expert, then each pair placed in
// its expert's next slot.
__global__ void expert_sort_kernel(ExpertRoutingShape shape, ExpertRouting r) {
  __shared__ int count[kMostExperts], start[kMostExperts + 1], cursor[kMostExperts];
  const int experts = static_cast<int>(shape.experts), tile = static_cast<int>(shape.tile_rows);
  const int64_t pairs = shape.pairs();
  for (int e = threadIdx.x; e < experts; e += blockDim.x) count[e] = cursor[e] = 0;
  __syncthreads();
  // Whole warps walk the pairs (the match and the shuffles take every lane).
  for (int64_t base = 0; base < pairs; base += blockDim.x) {
    const int64_t p = base + threadIdx.x;
    add_by_expert(count, p < pairs ? r.expert_of_pair[p] : 0, p < pairs);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x, per_lane = (experts + 31) / 32, first = lane * per_lane;
    int mine = 0;
    for (int e = first; e < min(first + per_lane, experts); ++e) mine += (count[e] + tile - 1) / tile * tile;
    int before = mine;  // inclusive scan over the lanes, then this lane's exclusive start
    for (int o = 1; o < 32; o *= 2) {
      const int other = __shfl_up_sync(0xffffffff, before, o);
      if (lane >= o) before += other;
    }
    int at = before - mine;
    for (int e = first; e < min(first + per_lane, experts); ++e) {
      start[e] = at;
      at += (count[e] + tile - 1) / tile * tile;
    }
    if (lane == 31) {
      start[experts] = before;
      *r.tiles_used = before / tile;
    }
  }
  __syncthreads();
  const int slots = start[experts];
  for (int t = threadIdx.x; t < slots / tile; t += blockDim.x) {
    // The last expert starting at or before the tile (the experts before it with no pairs share its start).
    int lo = 0, hi = experts - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (start[mid] <= t * tile) lo = mid;
      else hi = mid - 1;
    }
    r.expert_of_tile[t] = lo;
  }
  for (int s = threadIdx.x; s < slots; s += blockDim.x) r.pair_of_slot[s] = -1;
  __syncthreads();
  for (int64_t base = 0; base < pairs; base += blockDim.x) {
    const int64_t p = base + threadIdx.x;
    const int e = p < pairs ? r.expert_of_pair[p] : 0;
    const int place = add_by_expert(cursor, e, p < pairs);
    if (p < pairs) r.pair_of_slot[start[e] + place] = static_cast<int32_t>(p);
  }
}

// The grouped product's block: BM pair rows x BN columns of one expert, warps WARPS_M x WARPS_N,
// K in slices of SLICE_K (rows SLICE_K + 8 halves apart: an ldmatrix's eight rows in distinct banks).
template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int SLICE_K>
struct ExpertTile {
  static constexpr int kSliceK = SLICE_K, kSliceLd = SLICE_K + 8;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32, kWarpM = BM / WARPS_M, kWarpN = BN / WARPS_N;
  static constexpr int kMi = kWarpM / 16, kNi = kWarpN / 8;
  static constexpr int kChunks = kSliceK / 8;  // 16-byte pieces per row of a slice
  static constexpr int kAPieces = (BM * kChunks + kThreads - 1) / kThreads, kBPieces = BN * kChunks / kThreads;
  static constexpr size_t kSharedBytes = size_t(STAGES) * (BM + BN) * kSliceLd * sizeof(__half);
  static_assert(kSliceK % 16 == 0, "slice");
  static_assert(kWarpN % 16 == 0 && kWarpM % 16 == 0 && BN * kChunks % kThreads == 0, "tile shape");
};

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int SLICE_K>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32) expert_gemm_kernel(ExpertGemmArgs a) {
  using T = ExpertTile<BM, BN, WARPS_M, WARPS_N, STAGES, SLICE_K>;
  constexpr int kSliceK = T::kSliceK, kSliceLd = T::kSliceLd;
  extern __shared__ __align__(16) __half shared[];
  const int tile = blockIdx.x;
  if (tile >= *a.routing.tiles_used) return;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int64_t n0 = int64_t(blockIdx.y) * BN, k = a.k, n = a.n;
  const __half* w = a.weights + int64_t(a.routing.expert_of_tile[tile]) * n * k;
  // Each thread's pieces of the A and B slices: their sources at K = 0.
  const __half* a_src[T::kAPieces];
  bool a_valid[T::kAPieces];
#pragma unroll
  for (int i = 0; i < T::kAPieces; ++i) {
    const int piece = tid + i * T::kThreads, row = piece / T::kChunks;
    const int pair = piece < BM * T::kChunks ? a.routing.pair_of_slot[int64_t(tile) * BM + row] : -1;
    a_valid[i] = pair >= 0;
    a_src[i] = a.x + (a_valid[i] ? int64_t(pair / a.row_divisor) * k + (piece % T::kChunks) * 8 : 0);
  }
  const __half* b_src[T::kBPieces];
  bool b_valid[T::kBPieces];
#pragma unroll
  for (int i = 0; i < T::kBPieces; ++i) {
    const int piece = tid + i * T::kThreads, row = piece / T::kChunks;
    b_valid[i] = n0 + row < n;
    b_src[i] = w + (b_valid[i] ? (n0 + row) * k + (piece % T::kChunks) * 8 : 0);
  }
  auto stage_a = [&](int s) { return shared + s * (BM + BN) * kSliceLd; };
  auto load = [&](int s, int64_t k0) {
    __half* as = stage_a(s);
    __half* bs = as + BM * kSliceLd;
#pragma unroll
    for (int i = 0; i < T::kAPieces; ++i) {
      const int piece = tid + i * T::kThreads;
      if (piece < BM * T::kChunks)
        copy_async16(as + (piece / T::kChunks) * kSliceLd + (piece % T::kChunks) * 8, a_src[i] + (a_valid[i] ? k0 : 0), a_valid[i]);
    }
#pragma unroll
    for (int i = 0; i < T::kBPieces; ++i) {
      const int piece = tid + i * T::kThreads;
      copy_async16(bs + (piece / T::kChunks) * kSliceLd + (piece % T::kChunks) * 8, b_src[i] + (b_valid[i] ? k0 : 0), b_valid[i]);
    }
  };
  float acc[T::kMi][T::kNi][4] = {};
  const int slices = static_cast<int>(k / kSliceK);
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < slices) load(s, int64_t(s) * kSliceK);
    commit_copies();
  }
  for (int slice = 0; slice < slices; ++slice) {
    wait_copies<STAGES - 2>();
    __syncthreads();  // the slice is in; every warp is done with the stage the next load overwrites
    const int next = slice + STAGES - 1;
    if (next < slices) load(next % STAGES, int64_t(next) * kSliceK);
    commit_copies();
    const __half* as = stage_a(slice % STAGES);
    const __half* bs = as + BM * kSliceLd;
#pragma unroll
    for (int kk = 0; kk < kSliceK / 16; ++kk) {
      uint32_t af[T::kMi][4];
#pragma unroll
      for (int mi = 0; mi < T::kMi; ++mi)
        ldmatrix_x4(af[mi], as + (wm * T::kWarpM + mi * 16 + lane % 16) * kSliceLd + kk * 16 + (lane / 16) * 8);
#pragma unroll
      for (int np = 0; np < T::kNi / 2; ++np) {
        uint32_t bf[4];
        ldmatrix_x4(bf, bs + (wn * T::kWarpN + np * 16 + (lane / 16) * 8 + lane % 8) * kSliceLd + kk * 16 + ((lane / 8) & 1) * 8);
#pragma unroll
        for (int mi = 0; mi < T::kMi; ++mi) {
          mma16816(acc[mi][2 * np], af[mi], bf[0], bf[1]);
          mma16816(acc[mi][2 * np + 1], af[mi], bf[2], bf[3]);
        }
      }
    }
  }
  wait_copies<0>();
  // Rows g and g + 8 of each 16-row fragment, written to their pairs' rows.
#pragma unroll
  for (int mi = 0; mi < T::kMi; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int pair = a.routing.pair_of_slot[int64_t(tile) * BM + wm * T::kWarpM + mi * 16 + lane / 4 + 8 * half];
      if (pair < 0) continue;
#pragma unroll
      for (int ni = 0; ni < T::kNi; ++ni) {
        const int64_t col = n0 + wn * T::kWarpN + ni * 8 + 2 * (lane % 4);
        if (col < n)
          *reinterpret_cast<__half2*>(a.y + int64_t(pair) * n + col) =
              __floats2half2_rn(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
      }
    }
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int SLICE_K = 32>
void launch_tiles(const ExpertGemmArgs& a, cudaStream_t stream) {
  using T = ExpertTile<BM, BN, WARPS_M, WARPS_N, STAGES, SLICE_K>;
  const auto kernel = expert_gemm_kernel<BM, BN, WARPS_M, WARPS_N, STAGES, SLICE_K>;
  allow_shared_bytes(reinterpret_cast<const void*>(kernel), T::kSharedBytes);
  const dim3 grid(static_cast<unsigned>(a.shape.tiles()), static_cast<unsigned>((a.n + BN - 1) / BN));
  kernel<<<grid, T::kThreads, T::kSharedBytes, stream>>>(a);
  MC_CUDA_CHECK(cudaGetLastError());
}

// 8 columns of each of a block's rows per thread.
__global__ void expert_combine_kernel(ExpertCombineArgs a) {
  const int64_t row = blockIdx.x, k = a.shape.top_k;
  for (int64_t c = int64_t(threadIdx.x) * 8; c < a.width; c += int64_t(blockDim.x) * 8) {
    float sum[8] = {};
    if (a.add_residual) {
      const uint4 v = *reinterpret_cast<const uint4*>(a.residual + row * a.width + c);
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum[e] = __half2float(h[e]);
    }
    for (int64_t j = 0; j < k; ++j) {
      const float weight = a.routing.weight_of_pair[row * k + j];
      const uint4 v = *reinterpret_cast<const uint4*>(a.y + (row * k + j) * a.width + c);
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum[e] += weight * __half2float(h[e]);
    }
    uint4 out;
    __half* o = reinterpret_cast<__half*>(&out);
#pragma unroll
    for (int e = 0; e < 8; ++e) o[e] = __float2half_rn(sum[e]);
    *reinterpret_cast<uint4*>(a.residual + row * a.width + c) = out;
  }
}

}  // namespace

void launch_top_k_routing(const __half* scores, int64_t score_stride, const ExpertRoutingShape& shape, const ExpertRouting& r,
                          cudaStream_t stream) {
  constexpr int kRowsPerBlock = 8;
  top_k_routing_kernel<<<static_cast<unsigned>((shape.rows + kRowsPerBlock - 1) / kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
      scores, score_stride, shape, r);
  MC_CUDA_CHECK(cudaGetLastError());
}

void launch_expert_sort(const ExpertRoutingShape& shape, const ExpertRouting& r, cudaStream_t stream) {
  expert_sort_kernel<<<1, 1024, 0, stream>>>(shape, r);
  MC_CUDA_CHECK(cudaGetLastError());
}

void launch_expert_gemm(const ExpertGemmArgs& a, cudaStream_t stream) {
  if (expert_gemm_wgmma_supported(a)) return launch_expert_gemm_wgmma(a, stream);
  switch (a.shape.tile_rows) {
    // A decode's weight stream: slices of 128 (256 contiguous bytes of each weight row) where K allows.
    case 16: return a.k % 128 ? launch_tiles<16, 64, 1, 4, 4>(a, stream) : launch_tiles<16, 64, 1, 4, 4, 128>(a, stream);
    case 64: return launch_tiles<64, 128, 2, 2, 3>(a, stream);
    case 128: return launch_tiles<128, 128, 2, 2, 3>(a, stream);
    default: throw Error(kExitRuntime, "expert product tiles are 16, 64 or 128 rows");
  }
}

void launch_expert_combine(const ExpertCombineArgs& a, cudaStream_t stream) {
  const int threads = static_cast<int>(std::min<int64_t>(256, std::max<int64_t>(32, (a.width / 8 + 31) / 32 * 32)));
  expert_combine_kernel<<<static_cast<unsigned>(a.shape.rows), threads, 0, stream>>>(a);
  MC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace modelcost::cuda
