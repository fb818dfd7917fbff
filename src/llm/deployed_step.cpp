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

#include "llm/step_pricer.h"

namespace modelcost {
namespace {

constexpr int64_t kKernelsPerLayer = 10;  // a decode step's; a prefill's attention is one kernel, not two
// A MoE layer replaces the MLP's 3 kernels by the router product, the routing (top-k, then the
// pairs sorted by expert), the experts' grouped gate/up, activation and grouped down, and their
// combine into the residual; the shared experts add their own 3.
constexpr int64_t kExtraKernelsPerMoeLayer = 4, kSharedExpertKernels = 3;
constexpr int64_t kKernelsOutsideLayers = 3;  // embedding, final norm, LM head

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
    const int64_t positions = plan_positions(ctx);
    const FlashDecodingShape shape{plan_count(decodes), plan_count(x.heads), plan_count(x.kv_heads), plan_count(x.d), positions,
                                   positions};
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
  if (s.model->latent.present()) {
    price_latent_attention(s, mix, share, x, price);
  } else {
    price.product("QKV product", qkv.first, qkv.second);
    price_attention(s, mix, share, x, price);
  }
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
  if (m.latent.present()) {  // the output product reads the heads' values; the first product, the queries and the latent
    x.q = x.heads * static_cast<double>(m.latent.v_head_dim);
    x.qkv = latent_first_product_width(s);
  }
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
  int64_t per_layer = of.prefills && of.decodes ? kKernelsPerLayer + 2 : of.prefills ? kKernelsPerLayer - 1 : kKernelsPerLayer;
  if (m.latent.present()) per_layer = kKernelsPerLayer - 4 + latent_attention_kernels(m, of);  // less QKV, rotary, attention's two
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
    : prices_(std::make_unique<const Prices>(Prices{setup, step_ceilings(setup), weight_element_bytes(setup)})) {}
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
