// The deployed step's prediction (step_model.h): the kernels the CUDA module runs for `modelcost
// llm --measure` (a decode step, a prefill, or an iteration mixing them), each priced from the
// hardware database. Where calibrate measured the step's own kernels on generic shapes
// ([achievable.kernels] decode_*), a kernel of a decode's few rows takes its class's curve (fixed +
// bytes / gbps, the idle time after it included); a product of more rows takes the per-node
// report's gemm curve, the prefill's causal attention its own prefill_attention curve; otherwise
// the roofline of the achievable figures plus the kernel overhead and the gap.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "fusion/flash_decoding_plan.h"
#include "llm/step_model.h"
#include "roofline/matrix_efficiency.h"

namespace modelcost {
namespace {

constexpr int64_t kKernelsPerLayer = 10;  // a decode step's; a prefill's attention is one kernel, not two
// A MoE layer replaces the MLP's 3 kernels by the router product, the routing (top-k, then the
// pairs sorted by expert), the experts' grouped gate/up, activation and grouped down, and their
// combine into the residual; the shared experts add their own 3.
constexpr int64_t kExtraKernelsPerMoeLayer = 4, kSharedExpertKernels = 3;
constexpr int64_t kKernelsOutsideLayers = 3;  // embedding, final norm, LM head
constexpr double kSkinnyRows = 32;             // the products' curves span batch 1 to 32

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

const KernelCurve* curve(const Device& d, const char* name) {
  auto it = d.achievable.kernel_curves.find(name);
  return it == d.achievable.kernel_curves.end() ? nullptr : &it->second;
}

Ceilings ceilings(const StepSetup& s) {
  const Device& d = *s.device;
  const AchievableCeilings& a = d.achievable;
  Ceilings c;
  const double matrix = d.achievable_flops(s.gemm_peak.path, s.gemm_peak.dtype);
  c.matrix_flops = matrix > 0 ? matrix : s.gemm_peak.flops_per_s;
  // The attention kernel scores in fp32 on the vector units.
  const PeakChoice vector = choose_peak(d, MathPath::kVector, "fp32");
  const double vector_achievable = d.achievable_flops(vector.path, vector.dtype);
  c.vector_flops = vector_achievable > 0 ? vector_achievable : vector.flops_per_s;
  c.bandwidth = a.memory_bandwidth_gbps > 0 ? a.memory_bandwidth_gbps * 1e9 : d.bandwidth_bytes_per_s();
  c.fixed_us = deployed_fixed_us(d);
  // The curves are kernel durations: in the step's graph each call adds the library gap.
  c.gap_us = a.library_gap_us > 0 ? a.library_gap_us : a.kernel_gap_us;
  c.sm_count = d.compute_units;
  if (a.attention_load_scale > 0) c.attention_load_scale = a.attention_load_scale;
  // The curves describe fp16 kernels: other precisions keep the roofline.
  if (s.act == "fp16" && s.kv == "fp16") {
    c.gemm_one = curve(d, "decode_gemm_m1");
    c.gemm_many = curve(d, "decode_gemm_m32");
    c.attention = curve(d, "decode_attention");
    c.rowwise = curve(d, "decode_rowwise");
    c.norm = curve(d, "decode_norm");
    if (!c.norm) c.norm = c.rowwise;  // an entry calibrated before the norm had its own class
    c.gemm = curve(d, "gemm");
    c.expert_gemm = curve(d, "expert_gemm");
    c.expert_routing = curve(d, "expert_routing");
    // The prefill's own causal kernel; the per-node report's attention kernel where it was not timed.
    c.prefill_attention = curve(d, "prefill_attention");
    if (!c.prefill_attention) {
      c.prefill_attention = curve(d, "attention");
      c.prefill_attention_gap_us = c.gap_us;
    }
  }
  return c;
}

// Adds kernels and time to `role`'s entry, appended in first-seen order.
void add_to_role(std::vector<KernelRoleTime>& roles, const std::string& role, double kernels, double ms) {
  auto it = std::find_if(roles.begin(), roles.end(), [&](const KernelRoleTime& r) { return r.role == role; });
  if (it == roles.end()) it = roles.insert(roles.end(), KernelRoleTime{role, 0, 0});
  it->kernels += kernels;
  it->ms += ms;
}

// Bytes per stored weight element of the layers' GEMMs at the setup's weight precision.
double weight_element_bytes(const StepSetup& s) {
  double bytes = 0, elements = 0;
  for (const WeightGemm& g : s.model->gemms) {
    bytes += gemm_weight_bytes(s, g);
    elements += static_cast<double>(g.k) * static_cast<double>(g.n) * static_cast<double>(g.experts);
  }
  return elements > 0 ? bytes / elements : s.act_bytes;
}

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
  // RMSNorm: a reduction over the row before the write, its own curve.
  void norm(double bytes) { streamed("RMSNorm", c_.norm, bytes); }
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

// A MoE layer's MLP on one device (docs/llm.md, "Mixture of experts"): the router and its top-k
// for this replica's rows; the experts the group's tokens are routed to, whole on each device with
// --ep (else split by tp); their outputs combined into the residual; the shared experts.
void price_expert_mlp(const StepSetup& s, const StepWork& x, StepPricer& price) {
  const DecoderModel& m = *s.model;
  const ExpertLayers& e = m.experts;
  const double a = x.a, w = x.w, h = x.h, b = x.rows, experts = static_cast<double>(e.routed);
  const double k = static_cast<double>(e.per_token), shards = static_cast<double>(s.ep > 1 ? s.ep : s.tp);
  const double width = static_cast<double>(e.width), out = (m.gated_mlp ? 2 : 1) * width;
  const double tokens = x.tokens_of_group;
  const double touched = expected_experts_touched(experts, k, tokens) / shards, pairs = tokens * k / shards;
  const double rows = touched > 0 ? pairs / touched : 1;
  price.product("router product", {b, h, experts}, h * experts * w + b * (h + experts) * a);
  // Top-k over the scores, then one block sorts the pairs by expert: its passes over the pairs.
  price.routing(b, k, experts, a);
  if (s.ep > 1) price.collective("all-to-all", 0.5 * expert_all_to_all_ms(s, tokens));
  price.expert_product("expert gate/up product", {rows, h, out, touched}, touched * h * out * w + pairs * (h + out) * a);
  price.rowwise("expert activation", pairs * (out + width) * a);
  price.expert_product("expert down product", {rows, width, h, touched}, touched * width * h * w + pairs * (width + h) * a);
  if (s.ep > 1) price.collective("all-to-all", 0.5 * expert_all_to_all_ms(s, tokens));
  price.rowwise("expert combine", b * k * h * a + 2 * b * h * a);  // weighted into the residual
  if (e.shared_width == 0) return;
  const double shared = static_cast<double>(e.shared_width) / static_cast<double>(s.tp), shared_out = (m.gated_mlp ? 2 : 1) * shared;
  price.product("shared gate/up product", {b, h, shared_out}, h * shared_out * w + b * (h + shared_out) * a);
  price.rowwise("shared activation", b * (shared_out + shared) * a);
  price.product("shared down product", {b, shared, h}, shared * h * w + b * (shared + 2 * h) * a);
}

// The attention of one layer: rotary + cache append, then causal flash attention for the prefill
// chunks and flash-decoding for the decodes, each one kernel (pair) over all its sequences.
void price_attention(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, StepPricer& price) {
  const double decodes = std::ceil(mix.decodes * share), prefill_rows = mix.prefill_tokens * share;
  if (prefill_rows > 0) price.rowwise("rotary + KV append", 2 * prefill_rows * x.qkv * x.a);
  if (decodes > 0) price.rowwise("rotary + KV append", 2 * decodes * x.qkv * x.a);
  if (prefill_rows > 0) {
    double pairs = mix.prefill_pairs, keys = mix.prefill_keys;
    if (s.model->sliding_window > 0 && s.model->window_layers > 0) {
      // Sliding-window layers attend to at most their window: the chunks' mean chunk and past
      // (exact where the chunks are alike, as a prefill's are).
      const double q = mix.prefill_tokens / mix.prefills, p = mix.prefill_keys / mix.prefills - q;
      pairs = mix.prefills * attended_pairs(*s.model, q, p);
      keys = mix.prefills * (cached_positions(*s.model, p) + q);
    }
    const double flops = 4 * x.heads * x.d * pairs * share;
    const double bytes = 2 * prefill_rows * x.q * x.a + keys * share * 2 * x.kv_heads * x.d * s.kv_bytes;
    price.prefill_attention(flops, bytes, mix.longest_keys);
  }
  if (decodes > 0) {
    // Sliding-window layers read their window: the decodes' mean context through the window.
    const double ctx = cached_positions(*s.model, mix.decode_positions / mix.decodes);
    // The kernel's plan counts in int: a hostile size saturates rather than wraps.
    auto count = [](double v) { return static_cast<int>(std::clamp(v, 0.0, static_cast<double>(std::numeric_limits<int>::max()))); };
    const auto positions = static_cast<int64_t>(std::clamp(std::round(ctx), 1.0, 1e15));
    const FlashDecodingShape shape{count(decodes), count(x.heads), count(x.kv_heads), count(x.d), positions, positions};
    price.attention(shape, 4 * decodes * x.heads * x.d * ctx, decodes * x.kv_heads * ctx * x.d * 2 * s.kv_bytes + 2 * decodes * x.q * x.a);
  }
}

void price_layer(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, bool moe, StepPricer& price) {
  const double a = x.a, w = x.w, h = x.h, b = x.rows;
  // The layer's dense products and their bytes (the output and down products add the residual).
  const std::pair<Product, double> qkv{{b, h, x.qkv}, h * x.qkv * w + b * (h + x.qkv) * a},
      output{{b, x.q, h}, x.q * h * w + b * (x.q + 2 * h) * a},
      gate_up{{b, h, x.mlp_out}, h * x.mlp_out * w + b * (h + x.mlp_out) * a},
      down{{b, x.width, h}, x.width * h * w + b * (x.width + 2 * h) * a};
  price.load_from(moe ? std::vector<std::pair<Product, double>>{qkv, output}
                      : std::vector<std::pair<Product, double>>{qkv, output, gate_up, down});
  price.norm(2 * b * h * a + h * a);
  price.product("QKV product", qkv.first, qkv.second);
  price_attention(s, mix, share, x, price);
  price.product("output product", output.first, output.second);
  if (s.tp > 1) price.collective("all-reduce", x.allreduce_ms);
  price.norm(2 * b * h * a + h * a);
  if (moe) {
    price_expert_mlp(s, x, price);
  } else {
    price.product("gate/up product", gate_up.first, gate_up.second);
    price.rowwise("MLP activation", b * (x.mlp_out + x.width) * a);
    price.product("down product", down.first, down.second);
  }
  if (s.tp > 1) price.collective("all-reduce", x.allreduce_ms);
}

StepWork step_work(const StepSetup& s, const StepMix& mix, double share, double weight_bytes) {
  const DecoderModel& m = *s.model;
  StepWork x;
  x.rows = std::ceil(mix.decodes * share) + mix.prefill_tokens * share;
  x.sequences = std::ceil(mix.decodes * share) + std::ceil(mix.prefills * share);
  x.tokens_of_group = mix.rows();
  x.a = s.act_bytes;
  x.w = weight_bytes;
  x.h = static_cast<double>(m.hidden);
  x.d = static_cast<double>(m.head_dim);
  x.heads = s.heads_per_device;
  x.kv_heads = static_cast<double>(s.kv_heads_per_device);
  x.q = x.heads * x.d;
  x.qkv = (x.heads + 2 * x.kv_heads) * x.d;
  const double tp = static_cast<double>(s.tp);
  x.width = static_cast<double>(m.mlp_intermediate) / tp;
  x.mlp_out = (m.gated_mlp ? 2 : 1) * x.width;
  x.vocab = std::ceil(static_cast<double>(m.vocab) / tp);
  if (s.tp > 1) x.allreduce_ms = step_allreduce_ms(s, x.rows * x.h * x.a);
  return x;
}

}  // namespace

StepTime& StepTime::operator+=(const StepTime& other) {
  gemm_ms += other.gemm_ms;
  attention_ms += other.attention_ms;
  elementwise_ms += other.elementwise_ms;
  launch_ms += other.launch_ms;
  communication_ms += other.communication_ms;
  kernels += other.kernels;
  for (const KernelRoleTime& r : other.by_role) add_to_role(by_role, r.role, r.kernels, r.ms);
  return *this;
}

StepTime StepTime::scaled(double times) const {
  StepTime t = *this;
  for (double* part : {&t.gemm_ms, &t.attention_ms, &t.elementwise_ms, &t.launch_ms, &t.communication_ms, &t.kernels}) *part *= times;
  for (KernelRoleTime& r : t.by_role) {
    r.kernels *= times;
    r.ms *= times;
  }
  return t;
}

void StepMix::add_decode(int64_t context) {
  decodes += 1;
  decode_positions += static_cast<double>(context);
}

void StepMix::add_prefill(int64_t chunk, int64_t past) {
  const double q = static_cast<double>(chunk), p = static_cast<double>(past);
  prefills += 1;
  prefill_tokens += q;
  prefill_keys += p + q;
  prefill_pairs += q * p + q * (q + 1) / 2;
  longest_keys = std::max(longest_keys, p + q);
}

StepMix StepMix::uniform(int64_t decodes, int64_t context, int64_t prefills, int64_t chunk, int64_t past) {
  StepMix one, mix;
  one.add_decode(context);
  one.add_prefill(chunk, past);
  const double d = static_cast<double>(decodes), p = static_cast<double>(prefills);
  mix.decodes = d;
  mix.decode_positions = d * one.decode_positions;
  mix.prefills = p;
  mix.prefill_tokens = p * one.prefill_tokens;
  mix.prefill_keys = p * one.prefill_keys;
  mix.prefill_pairs = p * one.prefill_pairs;
  mix.longest_keys = prefills > 0 ? one.longest_keys : 0;
  return mix;
}

double deployed_fixed_us(const Device& d) {
  const AchievableCeilings& a = d.achievable;
  return (a.kernel_overhead_us > 0 ? a.kernel_overhead_us : d.launch_overhead_us) + a.kernel_gap_us;
}

int64_t deployed_step_kernels(const DecoderModel& m, const StepKernelsOf& of) {
  const int64_t per_moe_layer = kExtraKernelsPerMoeLayer + (m.experts.shared_width > 0 ? kSharedExpertKernels : 0);
  // Per layer a decode step's ten; a prefill's attention is one kernel instead of two; both
  // together add a second rotary and the prefill's attention.
  const int64_t per_layer = of.prefills && of.decodes ? kKernelsPerLayer + 2 : of.prefills ? kKernelsPerLayer - 1 : kKernelsPerLayer;
  int64_t kernels = per_layer * m.layers + kKernelsOutsideLayers + per_moe_layer * m.experts.moe_layers + (of.prefills ? 1 : 0);
  if (of.expert_parallel > 1) kernels += 2 * m.experts.moe_layers;  // the all-to-alls
  return of.tensor_parallel > 1 ? kernels + 2 * m.layers + 1 : kernels;
}

int64_t deployed_decode_kernels(const DecoderModel& m, int64_t tp, int64_t ep) {
  return deployed_step_kernels(m, {true, false, tp, ep});
}

struct DeployedStepModel::Prices {
  StepSetup setup;
  Ceilings ceilings;
  double weight_bytes = 0;
};

DeployedStepModel::DeployedStepModel(const StepSetup& setup)
    : prices_(std::make_unique<const Prices>(Prices{setup, ceilings(setup), weight_element_bytes(setup)})) {}
DeployedStepModel::~DeployedStepModel() = default;
DeployedStepModel::DeployedStepModel(DeployedStepModel&&) noexcept = default;

namespace {

// Where the step's pieces go: price() sends them all to one step, each layer counted as many times
// as the model has such layers; pieces() sends each to its own, one layer each.
struct PieceTargets {
  StepTime *before, *dense_layer, *moe_layer, *after;
  double dense_times = 1, moe_times = 1;
};

void price_pieces(const StepSetup& s, const Ceilings& ceilings, double weight_bytes, const StepMix& mix, bool by_role,
                  const PieceTargets& to) {
  const DecoderModel& m = *s.model;
  // With expert parallelism each attention replica runs its share of the sequences (the busiest's).
  const double share = 1 / std::max(1.0, s.attention_replicas);
  const StepWork x = step_work(s, mix, share, weight_bytes);
  const double a = x.a, h = x.h;
  StepPricer price(s, ceilings, by_role, *to.before);
  price.rowwise("embedding", 2 * x.rows * h * a);
  const int64_t dense = m.layers - m.experts.moe_layers;  // the dense layers come first
  price.into(*to.dense_layer);
  price.times(to.dense_times);
  if (dense > 0) price_layer(s, mix, share, x, false, price);
  price.into(*to.moe_layer);
  price.times(to.moe_times);
  if (m.experts.moe_layers > 0) price_layer(s, mix, share, x, true, price);
  price.into(*to.after);
  price.times(1);
  if (mix.prefills > 0) price.rowwise("last positions", 2 * x.sequences * h * a);
  price.norm(2 * x.sequences * h * a + h * a);
  price.product("LM head", {x.sequences, h, x.vocab}, h * x.vocab * x.w + x.sequences * (h + x.vocab) * a);
  if (s.tp > 1)
    price.collective("logits gather", 0.5 * step_allreduce_ms(s, x.sequences * static_cast<double>(m.vocab) * a));
}

}  // namespace

StepTime DeployedStepModel::price(const StepMix& mix, bool by_role) const {
  const DecoderModel& m = *prices_->setup.model;
  StepTime t;
  price_pieces(prices_->setup, prices_->ceilings, prices_->weight_bytes, mix, by_role,
               {&t, &t, &t, &t, static_cast<double>(m.layers - m.experts.moe_layers), static_cast<double>(m.experts.moe_layers)});
  return t;
}

DeployedStepModel::Pieces DeployedStepModel::pieces(const StepMix& mix) const {
  Pieces p;
  price_pieces(prices_->setup, prices_->ceilings, prices_->weight_bytes, mix, false,
               {&p.before, &p.dense_layer, &p.moe_layer, &p.after});
  return p;
}

StepTime predict_deployed_step(const StepSetup& s, const StepMix& mix) { return DeployedStepModel(s).price(mix); }

StepTime predict_deployed_decode(const StepSetup& s, int64_t batch, int64_t context) {
  return predict_deployed_step(s, StepMix::uniform(batch, context, 0, 0, 0));
}

}  // namespace modelcost
