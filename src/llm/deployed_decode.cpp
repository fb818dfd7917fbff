// The deployed decode step's prediction (step_model.h): the kernels the CUDA module runs for
// `modelcost llm --measure`, each priced from the hardware database. Where calibrate measured
// the step's own kernels on generic shapes ([achievable.kernels] decode_*), a kernel takes its
// class's curve (fixed + bytes / gbps, the idle time after it included); otherwise the roofline
// of the achievable figures plus the kernel overhead and the gap to the next one.
#include <algorithm>
#include <cmath>

#include "llm/step_model.h"

namespace modelcost {
namespace {

constexpr int64_t kKernelsPerLayer = 10;
// A MoE layer replaces the MLP's 3 kernels by the router product, the routing (softmax and top-k),
// the experts' gate/up, activation and down, and their combine into the residual; the shared
// experts add their own 3.
constexpr int64_t kExtraKernelsPerMoeLayer = 3, kSharedExpertKernels = 3;
constexpr int64_t kKernelsOutsideLayers = 3;  // embedding, final norm, LM head
constexpr double kSkinnyRows = 32;             // the products' curves span batch 1 to 32

struct Ceilings {
  double matrix_flops = 0, vector_flops = 0, bandwidth = 0, fixed_us = 0;
  const KernelCurve *gemm_one = nullptr, *gemm_many = nullptr, *attention = nullptr, *rowwise = nullptr;
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
  // The curves describe fp16 kernels: other precisions keep the roofline.
  if (s.act == "fp16" && s.kv == "fp16") {
    c.gemm_one = curve(d, "decode_gemm_m1");
    c.gemm_many = curve(d, "decode_gemm_m32");
    c.attention = curve(d, "decode_attention");
    c.rowwise = curve(d, "decode_rowwise");
  }
  return c;
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

// Accumulates kernels into the step's parts and its roles.
class StepPricer {
 public:
  StepPricer(const StepSetup& s, double batch, StepTime& t)
      : c_(ceilings(s)), batch_(batch), collective_fixed_us_(s.allreduce_calibrated ? 0 : c_.fixed_us), t_(t) {}
  // A weight product of `batch` rows: the products' curves between batch 1 and 32 (linear in the
  // rows), the roofline beyond or without them.
  void product(const char* role, double flops, double bytes) { product_of_rows(role, batch_, flops, bytes); }
  // The same at `rows` rows per weight (a routed expert's share of the tokens).
  void product_of_rows(const char* role, double rows, double flops, double bytes) {
    const bool curves = c_.gemm_one && c_.gemm_many && c_.gemm_one->gbps > 0 && c_.gemm_many->gbps > 0 && rows <= kSkinnyRows;
    if (!curves) return roofline(role, t_.gemm_ms, flops / c_.matrix_flops, bytes, 1);
    const double f = (std::max(1.0, rows) - 1) / (kSkinnyRows - 1);
    const double fixed = (1 - f) * c_.gemm_one->fixed_us + f * c_.gemm_many->fixed_us;
    const double stream = (1 - f) * c_.gemm_one->memory_us(bytes) + f * c_.gemm_many->memory_us(bytes);
    calibrated(role, t_.gemm_ms, fixed, stream, 1);
  }
  // Flash-decoding: the chunks and their merge.
  void attention(double flops, double bytes) {
    if (c_.attention && c_.attention->gbps > 0)
      return calibrated("attention", t_.attention_ms, c_.attention->fixed_us, c_.attention->memory_us(bytes), 2);
    roofline("attention", t_.attention_ms, flops / c_.vector_flops, bytes, 2);
  }
  void rowwise(const char* role, double bytes) {
    if (c_.rowwise && c_.rowwise->gbps > 0)
      return calibrated(role, t_.elementwise_ms, c_.rowwise->fixed_us, c_.rowwise->memory_us(bytes), 1);
    roofline(role, t_.elementwise_ms, 0, bytes, 1);
  }
  // A collective: the model's time, plus the kernel's fixed cost unless calibrate timed it in a graph.
  void collective(const char* role, double ms) {
    t_.communication_ms += ms;
    count(role, 1, ms + collective_fixed_us_ * 1e-3);
    t_.launch_ms += collective_fixed_us_ * 1e-3;
  }

 private:
  void roofline(const char* role, double& part, double compute_s, double bytes, int kernels) {
    const double ms = std::max(compute_s, bytes / c_.bandwidth) * 1e3, fixed_ms = kernels * c_.fixed_us * 1e-3;
    part += ms;
    t_.launch_ms += fixed_ms;
    count(role, kernels, ms + fixed_ms);
  }
  void calibrated(const char* role, double& part, double fixed_us, double stream_us, int kernels) {
    part += stream_us * 1e-3;
    t_.launch_ms += fixed_us * 1e-3;
    count(role, kernels, (fixed_us + stream_us) * 1e-3);
  }
  void count(const char* role, int kernels, double ms) {
    t_.kernels += kernels;
    auto it = std::find_if(t_.by_role.begin(), t_.by_role.end(), [&](const KernelRoleTime& r) { return r.role == role; });
    if (it == t_.by_role.end()) it = t_.by_role.insert(t_.by_role.end(), KernelRoleTime{role, 0, 0});
    it->kernels += kernels;
    it->ms += ms;
  }
  Ceilings c_;
  double batch_, collective_fixed_us_;
  StepTime& t_;
};

// A MoE layer's MLP on one device (docs/llm.md, "Mixture of experts"): the router and its top-k
// for this replica's `b` sequences; the experts the group's `tokens` are routed to, whole on each
// device with --ep (else split by tp); their outputs combined into the residual; the shared
// experts. `w`: weight bytes per element.
void price_expert_mlp(const StepSetup& s, double b, double tokens, double w, StepPricer& price) {
  const DecoderModel& m = *s.model;
  const ExpertLayers& e = m.experts;
  const double a = s.act_bytes, h = static_cast<double>(m.hidden), experts = static_cast<double>(e.routed);
  const double k = static_cast<double>(e.per_token), shards = static_cast<double>(s.ep > 1 ? s.ep : s.tp);
  const double width = static_cast<double>(e.width), out = (m.gated_mlp ? 2 : 1) * width;
  const double touched = expected_experts_touched(experts, k, tokens) / shards, pairs = tokens * k / shards;
  const double rows = touched > 0 ? pairs / touched : 1;
  price.product("router product", 2 * b * h * experts, h * experts * w + b * (h + experts) * a);
  price.rowwise("routing", b * experts * a + b * k * 8);  // the scores in, expert ids and weights out
  if (s.ep > 1) price.collective("all-to-all", 0.5 * expert_all_to_all_ms(s, tokens));
  price.product_of_rows("expert gate/up product", rows, 2 * pairs * h * out, touched * h * out * w + pairs * (h + out) * a);
  price.rowwise("expert activation", pairs * (out + width) * a);
  price.product_of_rows("expert down product", rows, 2 * pairs * width * h, touched * width * h * w + pairs * (width + h) * a);
  if (s.ep > 1) price.collective("all-to-all", 0.5 * expert_all_to_all_ms(s, tokens));
  price.rowwise("expert combine", b * k * h * a + 2 * b * h * a);  // weighted into the residual
  if (e.shared_width == 0) return;
  const double shared = static_cast<double>(e.shared_width) / static_cast<double>(s.tp), shared_out = (m.gated_mlp ? 2 : 1) * shared;
  price.product("shared gate/up product", 2 * b * h * shared_out, h * shared_out * w + b * (h + shared_out) * a);
  price.rowwise("shared activation", b * (shared_out + shared) * a);
  price.product("shared down product", 2 * b * shared * h, shared * h * w + b * (shared + 2 * h) * a);
}

}  // namespace

double deployed_fixed_us(const Device& d) {
  const AchievableCeilings& a = d.achievable;
  return (a.kernel_overhead_us > 0 ? a.kernel_overhead_us : d.launch_overhead_us) + a.kernel_gap_us;
}

int64_t deployed_decode_kernels(const DecoderModel& m, int64_t tp, int64_t ep) {
  const int64_t per_moe_layer = kExtraKernelsPerMoeLayer + (m.experts.shared_width > 0 ? kSharedExpertKernels : 0);
  int64_t kernels = kKernelsPerLayer * m.layers + kKernelsOutsideLayers + per_moe_layer * m.experts.moe_layers;
  if (ep > 1) kernels += 2 * m.experts.moe_layers;  // the all-to-alls
  return tp > 1 ? kernels + 2 * m.layers + 1 : kernels;
}

StepTime predict_deployed_decode(const StepSetup& s, int64_t batch, int64_t context) {
  const DecoderModel& m = *s.model;
  // With expert parallelism each attention replica runs its share of the sequences (the busiest's).
  const double tp = static_cast<double>(s.tp), b = std::ceil(static_cast<double>(batch) / s.attention_replicas);
  const double ctx = cached_positions(m, static_cast<double>(context));  // sliding-window layers read their window
  const double a = s.act_bytes, w = weight_element_bytes(s), h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double heads = s.heads_per_device, kv_heads = static_cast<double>(s.kv_heads_per_device);
  const double q = heads * d, qkv = (heads + 2 * kv_heads) * d;
  const double width = static_cast<double>(m.mlp_intermediate) / tp, mlp_out = (m.gated_mlp ? 2 : 1) * width;
  const double vocab = std::ceil(static_cast<double>(m.vocab) / tp);
  const double block = s.tp > 1 ? allreduce_ms(b * h * a, s.tp, s.allreduce_gbps, s.allreduce_latency_us, s.collective) : 0;
  StepTime t;
  StepPricer price(s, b, t);
  price.rowwise("embedding", 2 * b * h * a);
  for (int64_t layer = 0; layer < m.layers; ++layer) {
    price.rowwise("RMSNorm", 2 * b * h * a + h * a);
    price.product("QKV product", 2 * b * h * qkv, h * qkv * w + b * (h + qkv) * a);
    price.rowwise("rotary + KV append", 2 * b * qkv * a);
    price.attention(4 * b * heads * d * ctx, b * kv_heads * ctx * d * 2 * s.kv_bytes + 2 * b * q * a);
    price.product("output product", 2 * b * q * h, q * h * w + b * (q + 2 * h) * a);  // the residual added
    if (s.tp > 1) price.collective("all-reduce", block);
    price.rowwise("RMSNorm", 2 * b * h * a + h * a);
    if (layer >= m.layers - m.experts.moe_layers) {  // a MoE layer (the dense ones come first)
      price_expert_mlp(s, b, static_cast<double>(batch), w, price);
      if (s.tp > 1) price.collective("all-reduce", block);
      continue;
    }
    price.product("gate/up product", 2 * b * h * mlp_out, h * mlp_out * w + b * (h + mlp_out) * a);
    price.rowwise("MLP activation", b * (mlp_out + width) * a);
    price.product("down product", 2 * b * width * h, width * h * w + b * (width + 2 * h) * a);  // the residual added
    if (s.tp > 1) price.collective("all-reduce", block);
  }
  price.rowwise("RMSNorm", 2 * b * h * a + h * a);
  price.product("LM head", 2 * b * h * vocab, h * vocab * w + b * (h + vocab) * a);
  if (s.tp > 1)
    price.collective("logits gather", 0.5 * allreduce_ms(b * static_cast<double>(m.vocab) * a, s.tp, s.allreduce_gbps,
                                                         s.allreduce_latency_us, s.collective));
  return t;
}

}  // namespace modelcost
