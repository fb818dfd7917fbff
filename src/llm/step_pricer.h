// How the deployed step's kernels are priced (deployed_step.cpp, deployed_latent.cpp): the
// device's ceilings and calibrated curves, and the pricer that adds each kernel to the step's
// parts and roles. Internal to the llm stage.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fusion/flash_decoding_plan.h"
#include "fusion/latent_decoding_plan.h"
#include "llm/step_model.h"
#include "roofline/matrix_efficiency.h"

namespace modelcost {

constexpr double kSkinnyRows = 32;  // the products' curves span batch 1 to 32


struct Ceilings {
  double matrix_flops = 0, vector_flops = 0, bandwidth = 0, fixed_us = 0, gap_us = 0, sm_count = 0;
  // The idle time after the prefill's attention: in its own curve (timed back to back in a graph),
  // not in the per-node report's (kernel durations).
  double prefill_attention_gap_us = 0;
  // The prefill's attention between compute-bound products: their power draw lowers the SM clock.
  double attention_load_scale = 1;
  const KernelCurve *gemm_one = nullptr, *gemm_many = nullptr, *attention = nullptr, *rowwise = nullptr, *norm = nullptr;
  const KernelCurve *gemm = nullptr, *prefill_attention = nullptr;  // the per-node report's library curves
  const KernelCurve* expert_gemm = nullptr;                         // the experts' grouped product
  const KernelCurve* expert_routing = nullptr;                      // top-k and the sort by expert, together
};

// A decode kernel's plan counts in int and int64: a hostile size saturates rather than wraps.
inline int plan_count(double v) { return static_cast<int>(std::clamp(v, 0.0, static_cast<double>(std::numeric_limits<int>::max()))); }
inline int64_t plan_positions(double context) { return static_cast<int64_t>(std::clamp(std::round(context), 1.0, 1e15)); }

// The setup's device figures and curves (the curves only for fp16 steps).
Ceilings step_ceilings(const StepSetup& s);

// Adds kernels and time to `role`'s entry, appended in first-seen order.
void add_to_role(std::vector<KernelRoleTime>& roles, const std::string& role, double kernels, double ms);

// Bytes per stored weight element of the layers' GEMMs at the setup's weight precision.
double weight_element_bytes(const StepSetup& s);

// One weight product: `rows` rows per weight against `count` weights of k x n (a routed expert's
// share of the tokens against the experts touched; one weight otherwise).
struct Product {
  double rows = 0, k = 0, n = 0, count = 1;
  double flops() const { return 2 * rows * k * n * count; }
};

// Accumulates kernels into the step's parts and its roles. A layer is priced once and counted
// `layers` times (every dense layer runs the same kernels): times(layers) scales what follows.
class StepPricer {
 public:
  StepPricer(const StepSetup& s, const Ceilings& c, bool by_role, StepTime& t)
      : c_(c), collective_fixed_us_(s.allreduce_calibrated ? 0 : c_.fixed_us), by_role_(by_role), t_(&t) {}
  void times(double layers) { times_ = layers; }
  // What follows is added to `t` instead (the step's pieces, DeployedStepModel::pieces).
  void into(StepTime& t) { t_ = &t; }
  // The step's products hold the GPU at its power limit where any of them is compute-bound on the
  // gemm curve (a chunk's many rows; the skinny products of a decode's few never are).
  void load_from(const std::vector<std::pair<Product, double>>& products) {
    if (!c_.gemm || !(c_.gemm->tflops > 0)) return;
    for (const auto& [p, bytes] : products)
      if (p.rows > kSkinnyRows && c_.gemm->compute_us(p.flops()) >= c_.gemm->memory_us(bytes)) compute_bound_products_ = true;
  }
  // Up to 32 rows the skinny products' curves (linear in the rows between 1 and 32); beyond, the
  // gemm curve with the tile model's floor; the roofline without curves.
  void product(const char* role, const Product& p, double bytes) {
    const double flops = p.flops();
    if (p.rows > kSkinnyRows) return wide_product(role, p, bytes);
    const bool curves = c_.gemm_one && c_.gemm_many && c_.gemm_one->gbps > 0 && c_.gemm_many->gbps > 0;
    if (!curves) return roofline(role, t_->gemm_ms, flops / c_.matrix_flops, bytes, 1);
    const double f = (std::max(1.0, p.rows) - 1) / (kSkinnyRows - 1);
    const double fixed = (1 - f) * c_.gemm_one->fixed_us + f * c_.gemm_many->fixed_us;
    const double stream = (1 - f) * c_.gemm_one->memory_us(bytes) + f * c_.gemm_many->memory_us(bytes);
    calibrated(role, t_->gemm_ms, fixed, stream, 1);
  }
  // Causal flash attention over the prefill chunks (one kernel on tensor cores): the attention
  // curve, its K loop the longest chunk's keys; the roofline at the matrix peak without it. Where
  // the step's products are compute-bound (a long chunk's), the GPU runs at its power limit and
  // the attention's work takes the device's attention_load_scale longer than the curve, timed alone.
  void prefill_attention(double flops, double bytes, double keys) {
    if (c_.prefill_attention && c_.prefill_attention->tflops > 0) {
      const KernelCurve& k = *c_.prefill_attention;
      const double load = compute_bound_products_ ? c_.attention_load_scale : 1.0;
      const double stream = load * k.throughput_us(k.compute_us(flops), k.memory_us(bytes));
      return calibrated(kPrefillAttentionRole, t_->attention_ms, k.latency_us(keys) + c_.prefill_attention_gap_us, stream, 1);
    }
    roofline(kPrefillAttentionRole, t_->attention_ms, flops / c_.matrix_flops, bytes, 1);
  }
  // Flash-decoding: the chunks and their merge. Its curve prices the plan the runtime launches
  // (fusion/flash_decoding_plan.h): the waves of chunk blocks over the SMs, every slot of a wave a
  // full chunk's dependent steps, and the cache streamed once (an entry calibrated before the
  // waves were timed has the bytes term alone).
  void attention(const FlashDecodingShape& shape, double flops, double bytes) {
    if (c_.attention && c_.attention->gbps > 0) {
      const KernelCurve& k = *c_.attention;
      const FlashDecodingWork w = flash_decoding_work(shape, static_cast<int>(c_.sm_count));
      const double stream = k.latency_us(w.k) - k.fixed_us + k.throughput_us(k.compute_us(w.flops), k.memory_us(w.bytes));
      return calibrated("attention", t_->attention_ms, k.fixed_us, stream, 2);
    }
    roofline("attention", t_->attention_ms, flops / c_.vector_flops, bytes, 2);
  }
  // The experts' grouped product: `p.count` experts of `p.rows` pairs each, in tiles of
  // expert_tile_rows (the FLOPs of the blocks as they run: expert_product_flops); its own curve,
  // else the roofline.
  void expert_product(const char* role, const Product& p, double bytes) {
    const double flops = expert_product_flops(p.count, p.rows, p.n, p.k, c_.sm_count);
    if (c_.expert_gemm && c_.expert_gemm->tflops > 0) {
      const KernelCurve& g = *c_.expert_gemm;
      return calibrated(role, t_->gemm_ms, g.latency_us(p.k), g.throughput_us(g.compute_us(flops), g.memory_us(bytes)), 1);
    }
    roofline(role, t_->gemm_ms, flops / c_.matrix_flops, bytes, 1);
  }
  // Multi-head latent attention's decode kernels (fusion/latent_decoding_plan.h): the chunk
  // kernel's waves, each a block's bytes at its SM's share of the achievable bandwidth (a block's
  // tiles follow one another), then the merge's reads; never under the roofline.
  void latent_attention(const LatentDecodingWork& w) {
    const double per_sm = c_.sm_count > 0 ? c_.bandwidth / c_.sm_count : c_.bandwidth;
    const double waves_us = (w.waves * w.block_bytes / per_sm + w.merge_bytes / c_.bandwidth) * 1e6;
    const double floor_us = std::max(w.flops / c_.matrix_flops, w.bytes / c_.bandwidth) * 1e6;
    calibrated("attention", t_->attention_ms, 2 * c_.fixed_us, std::max(waves_us, floor_us), 2);
  }
  void rowwise(const char* role, double bytes) { streamed(role, c_.rowwise, bytes); }
  // The routing's two kernels (top-k, then the pairs sorted by expert in one block): their own
  // curve over both, else two row kernels.
  void routing(double rows, double per_token, double experts, double act_bytes) {
    const double pairs = rows * per_token;
    if (c_.expert_routing && c_.expert_routing->gbps > 0)
      return calibrated("routing", t_->elementwise_ms, c_.expert_routing->fixed_us,
                        c_.expert_routing->memory_us(expert_routing_bytes(pairs)), 2);
    streamed("routing", c_.rowwise, rows * experts * act_bytes + pairs * 12, 2);  // the scores in, the pairs out
  }
  // RMSNorm: a reduction over the row before the write, its own curve; `role` for a kernel that
  // norms on the way (MLA's latent append).
  void norm(double bytes, const char* role = "RMSNorm") { streamed(role, c_.norm, bytes); }
  // A collective: the model's time, plus the kernel's fixed cost unless calibrate timed it in a graph.
  void collective(const char* role, double ms) {
    t_->communication_ms += times_ * ms;
    count(role, 1, ms + collective_fixed_us_ * 1e-3);
    t_->launch_ms += times_ * collective_fixed_us_ * 1e-3;
  }

 private:
  void streamed(const char* role, const KernelCurve* curve, double bytes, int kernels = 1) {
    if (curve && curve->gbps > 0)
      return calibrated(role, t_->elementwise_ms, kernels * curve->fixed_us, curve->memory_us(bytes), kernels);
    roofline(role, t_->elementwise_ms, 0, bytes, kernels);
  }
  // The library's tiles in waves over the SMs bound the product from below (as in the per-node
  // report), whatever the curve says.
  void wide_product(const char* role, const Product& p, double bytes) {
    const SmArray sms{c_.sm_count, c_.matrix_flops, c_.bandwidth};
    const double tiled_us = c_.sm_count > 0 ? best_tiling(GemmShape{p.rows, p.n, p.k, p.count}, sms).us : 0;
    if (c_.gemm && c_.gemm->tflops > 0) {
      const KernelCurve& g = *c_.gemm;
      const double stream = std::max(g.throughput_us(g.compute_us(p.flops()), g.memory_us(bytes)), tiled_us);
      return calibrated(role, t_->gemm_ms, g.latency_us(p.k) + c_.gap_us, stream, 1);
    }
    roofline(role, t_->gemm_ms, std::max(p.flops() / c_.matrix_flops, tiled_us * 1e-6), bytes, 1);
  }
  void roofline(const char* role, double& part, double compute_s, double bytes, int kernels) {
    const double ms = std::max(compute_s, bytes / c_.bandwidth) * 1e3, fixed_ms = kernels * c_.fixed_us * 1e-3;
    part += times_ * ms;
    t_->launch_ms += times_ * fixed_ms;
    count(role, kernels, ms + fixed_ms);
  }
  void calibrated(const char* role, double& part, double fixed_us, double stream_us, int kernels) {
    part += times_ * stream_us * 1e-3;
    t_->launch_ms += times_ * fixed_us * 1e-3;
    count(role, kernels, (fixed_us + stream_us) * 1e-3);
  }
  void count(const char* role, int kernels, double ms) {
    t_->kernels += times_ * kernels;
    if (!by_role_) return;
    add_to_role(t_->by_role, role, times_ * kernels, times_ * ms);
  }
  static constexpr const char* kPrefillAttentionRole = "prefill attention";
  const Ceilings& c_;
  double collective_fixed_us_, times_ = 1;
  bool by_role_;
  bool compute_bound_products_ = false;  // load_from's finding
  StepTime* t_;
};

// The step's sequences on this device's replica, with the widths of its kernels.
struct StepWork {
  double rows = 0, sequences = 0, tokens_of_group = 0;  // tokens_of_group: the whole group's (routing)
  double a = 0, w = 0, h = 0, d = 0, heads = 0, kv_heads = 0, q = 0, qkv = 0, width = 0, mlp_out = 0, vocab = 0;
  double allreduce_ms = 0;
};

// Multi-head latent attention in the deployed step (deployed_latent.cpp): the first product's
// width per row (the queries, or their low-rank input, and the latent with its rotary key); the
// attention's products and kernels of one layer; their kernel count.
double latent_first_product_width(const StepSetup& s);
void price_latent_attention(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, StepPricer& price);
int64_t latent_attention_kernels(const DecoderModel& m, const StepKernelsOf& of);

}  // namespace modelcost
