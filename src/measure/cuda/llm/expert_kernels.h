// The routed experts of a mixture-of-experts layer as a serving runtime runs them (vLLM's fused
// MoE; expert_kernels.cu): softmax top-k routing of each row, the pairs (row, chosen expert)
// sorted by expert into tiles, one grouped product over the tiles of the experts the step
// reaches (no other expert's weights are read), and the weighted sum of each row's k results
// into the residual. fp16 storage, fp32 arithmetic; every launcher enqueues on the given stream,
// checks the launch and does not synchronise, so the whole layer replays in a CUDA graph.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace modelcost::cuda {

// A step's routing sizes; tiles() and slots() bound what the sort can use, whatever the routing.
struct ExpertRoutingShape {
  int64_t rows = 0, experts = 0, top_k = 0, tile_rows = 16;
  __host__ __device__ int64_t pairs() const { return rows * top_k; }
  // Each expert reached pads its pairs to whole tiles: at most one partial tile per expert.
  int64_t tiles() const { return (pairs() + tile_rows - 1) / tile_rows + std::min(experts, pairs()); }
  int64_t slots() const { return tiles() * tile_rows; }
};
// The largest expert count and top-k the routing kernels take.
inline constexpr int64_t kMostExperts = 256, kMostExpertsPerToken = 32;

// A trained router spreads a batch's tokens over its experts (its training balanced them); a
// router of random weights sends tokens with alike hidden states to the same few. The measured
// step adds to each score a fixed draw of this many units, uniform per (row, expert), so each
// row's experts are a uniform draw, as the plan's expected experts touched assume.
inline constexpr float kRoutingSpread = 16.f;
__host__ __device__ inline float routing_draw(int64_t row, int64_t expert) {
  uint32_t h = static_cast<uint32_t>(row) * 0x9E3779B1u ^ static_cast<uint32_t>(expert) * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return kRoutingSpread * (static_cast<float>(h >> 8) * (1.f / 16777216.f));
}

// The routing in device memory (sizes from ExpertRoutingShape). A pair is row * top_k + j.
struct ExpertRouting {
  int32_t* expert_of_pair = nullptr;  // [pairs]: each row's top-k experts
  float* weight_of_pair = nullptr;    // [pairs]: their softmax weights, renormalised over the k
  int32_t* pair_of_slot = nullptr;    // [slots]: the pairs sorted by expert, each expert's padded to whole tiles (-1)
  int32_t* expert_of_tile = nullptr;  // [tiles]
  int32_t* tiles_used = nullptr;      // [1]
};

// scores [rows, score_stride] (the router product; its first `experts` columns), each plus its
// routing_draw -> expert_of_pair and weight_of_pair.
void launch_top_k_routing(const __half* scores, int64_t score_stride, const ExpertRoutingShape& shape, const ExpertRouting& r,
                          cudaStream_t stream);
// expert_of_pair -> pair_of_slot, expert_of_tile and tiles_used (one block: counts, padded offsets, scatter).
void launch_expert_sort(const ExpertRoutingShape& shape, const ExpertRouting& r, cudaStream_t stream);

// y[pair] = x[pair / row_divisor] W[expert of pair]^T for every pair of the sorted tiles: the
// experts' gate/up product (row_divisor = top_k: each row of the step feeds its k pairs) and down
// product (row_divisor = 1: the activation's rows are the pairs). W is [experts][n][k], as linear
// layers store it; k a multiple of 32, n even.
struct ExpertGemmArgs {
  const __half* x = nullptr;
  const __half* weights = nullptr;
  __half* y = nullptr;  // [pairs, n]
  int64_t n = 0, k = 0;
  int row_divisor = 1;
  ExpertRoutingShape shape;
  ExpertRouting routing;
};
void launch_expert_gemm(const ExpertGemmArgs& a, cudaStream_t stream);

// residual[row] = (add_residual ? residual[row] : 0) + sum_j weight_of_pair * y[row * top_k + j]
// over width columns (a multiple of 8).
struct ExpertCombineArgs {
  const __half* y = nullptr;
  __half* residual = nullptr;
  int64_t width = 0;
  bool add_residual = true;
  ExpertRoutingShape shape;
  ExpertRouting routing;
};
void launch_expert_combine(const ExpertCombineArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
