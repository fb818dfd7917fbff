// The routed experts' kernels against a host mixture of experts on small shapes (GPU only): a
// decode's few pairs per expert, a prefill's many (the three tile sizes), widths that end inside
// a column block, and the sort's invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "measure/cuda_entry.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "llm/expert_kernels.h"
#include "llm/step_kernels.h"
#include "measure/cuda/llm/half_array.h"
#include "modelcost/llm.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

struct MoeCase {
  int rows, experts, top_k, hidden, width;
};

// Device buffers of one routing.
struct RoutingBuffers {
  std::vector<void*> owned;
  cuda::ExpertRouting r;
  explicit RoutingBuffers(const cuda::ExpertRoutingShape& s) {
    r.expert_of_pair = alloc<int32_t>(s.pairs());
    r.weight_of_pair = alloc<float>(s.pairs());
    r.pair_of_slot = alloc<int32_t>(s.slots());
    r.expert_of_tile = alloc<int32_t>(s.tiles());
    r.tiles_used = alloc<int32_t>(1);
  }
  ~RoutingBuffers() {
    for (void* p : owned) cudaFree(p);
  }
  template <typename T>
  T* alloc(int64_t n) {
    void* p = nullptr;
    cudaMalloc(&p, std::max<int64_t>(n, 1) * sizeof(T));
    owned.push_back(p);
    return static_cast<T*>(p);
  }
};

template <typename T>
std::vector<T> read(const T* device, int64_t n) {
  std::vector<T> out(n);
  cudaDeviceSynchronize();
  cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost);
  return out;
}

// Each row's top-k experts by score plus its routing draw (ties to the lower expert) and their
// softmax weights renormalised over the k.
void host_routing(const std::vector<float>& scores, const MoeCase& c, std::vector<int>& expert, std::vector<float>& weight) {
  for (int r = 0; r < c.rows; ++r) {
    std::vector<int> order(c.experts);
    std::iota(order.begin(), order.end(), 0);
    std::vector<float> s(c.experts);
    for (int e = 0; e < c.experts; ++e) s[e] = scores[size_t(r) * c.experts + e] + cuda::routing_draw(r, e);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return s[a] > s[b]; });
    double chosen = 0;
    for (int j = 0; j < c.top_k; ++j) chosen += std::exp(s[order[j]] - s[order[0]]);
    for (int j = 0; j < c.top_k; ++j) {
      expert.push_back(order[j]);
      weight.push_back(static_cast<float>(std::exp(s[order[j]] - s[order[0]]) / chosen));
    }
  }
}

float silu(float x) { return x / (1.f + std::exp(-x)); }

void check_mixture(const MoeCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int pairs = c.rows * c.top_k;
  HalfArray scores(size_t(c.rows) * c.experts, &rng, 2.f), x(size_t(c.rows) * c.hidden, &rng);
  HalfArray up_w(size_t(c.experts) * 2 * c.width * c.hidden, &rng, 0.1f), down_w(size_t(c.experts) * c.hidden * c.width, &rng, 0.1f);
  HalfArray gate_up(size_t(pairs) * 2 * c.width), act(size_t(pairs) * c.width), down(size_t(pairs) * c.hidden),
      residual(size_t(c.rows) * c.hidden);
  const cuda::ExpertRoutingShape shape{c.rows, c.experts, c.top_k,
                                       expert_tile_rows(double(pairs) / double(std::min(pairs, c.experts)))};
  RoutingBuffers b(shape);
  cudaStream_t stream = nullptr;
  cuda::launch_top_k_routing(scores.device, c.experts, shape, b.r, stream);
  cuda::launch_expert_sort(shape, b.r, stream);
  cuda::launch_expert_gemm({x.device, up_w.device, gate_up.device, 2 * c.width, c.hidden, c.top_k, shape, b.r}, stream);
  cuda::launch_silu_mul(gate_up.device, act.device, pairs, c.width, stream);
  cuda::launch_expert_gemm({act.device, down_w.device, down.device, c.hidden, c.width, 1, shape, b.r}, stream);
  cuda::launch_expert_combine({down.device, residual.device, c.hidden, false, shape, b.r}, stream);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<int> expert;
  std::vector<float> weight;
  host_routing(scores.host, c, expert, weight);
  EXPECT_EQ(read(b.r.expert_of_pair, pairs), std::vector<int32_t>(expert.begin(), expert.end()));
  if (pairs >= 50 * c.experts) {  // the routing draws spread the pairs evenly over the experts
    std::vector<int> per_expert(c.experts, 0);
    for (int e : expert) ++per_expert[e];
    for (int n : per_expert) EXPECT_NEAR(n, double(pairs) / c.experts, 0.3 * pairs / c.experts);
  }
  const std::vector<float> got_weight = read(b.r.weight_of_pair, pairs);
  for (int p = 0; p < pairs; ++p) EXPECT_NEAR(got_weight[p], weight[p], 1e-4) << "pair " << p;
  // The sort: every pair once, in a tile of its expert; tiles no more than the bound.
  const int tiles = read(b.r.tiles_used, 1)[0];
  ASSERT_LE(tiles, shape.tiles());
  const std::vector<int32_t> slots = read(b.r.pair_of_slot, int64_t(tiles) * shape.tile_rows), tile_expert = read(b.r.expert_of_tile, tiles);
  std::vector<int> seen(pairs, 0);
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s] < 0) continue;
    ++seen[slots[s]];
    EXPECT_EQ(tile_expert[s / shape.tile_rows], expert[slots[s]]) << "slot " << s;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), pairs);

  std::vector<float> want(size_t(c.rows) * c.hidden, 0.f);
  std::vector<float> h(c.width);
  for (int p = 0; p < pairs; ++p) {
    const int r = p / c.top_k, e = expert[p];
    for (int j = 0; j < c.width; ++j) {
      double g = 0, u = 0;
      for (int k = 0; k < c.hidden; ++k) {
        const double xv = x.host[size_t(r) * c.hidden + k];
        g += xv * up_w.host[(size_t(e) * 2 * c.width + j) * c.hidden + k];
        u += xv * up_w.host[(size_t(e) * 2 * c.width + c.width + j) * c.hidden + k];
      }
      h[j] = silu(static_cast<float>(g)) * static_cast<float>(u);
    }
    for (int n = 0; n < c.hidden; ++n) {
      double y = 0;
      for (int j = 0; j < c.width; ++j) y += h[j] * down_w.host[(size_t(e) * c.hidden + n) * c.width + j];
      want[size_t(r) * c.hidden + n] += weight[p] * static_cast<float>(y);
    }
  }
  EXPECT_LT(relative_error(residual.read(), want), 2e-2) << c.rows << " rows, tiles of " << shape.tile_rows;
}

TEST(ExpertKernels, DecodeRowsMatchTheHostMixture) {
  SKIP_WITHOUT_GPU();
  check_mixture({3, 8, 2, 256, 96}, 1);  // tiles of 16
  check_mixture({5, 60, 4, 128, 64}, 2);  // most experts unreached
}

TEST(ExpertKernels, PrefillRowsMatchTheHostMixture) {
  SKIP_WITHOUT_GPU();
  check_mixture({100, 8, 2, 256, 96}, 3);   // 25 pairs per expert: tiles of 64, N = 192 ends inside a block
  check_mixture({600, 8, 2, 128, 160}, 4);  // 150 pairs per expert: tiles of 128
  check_mixture({300, 8, 2, 192, 128}, 5);  // both products' K a multiple of 64 (warpgroup kernels on Hopper)
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
