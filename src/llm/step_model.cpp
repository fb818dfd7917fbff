#include "llm/step_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "modelcost/errors.h"

namespace modelcost {

double attended_pairs(const DecoderModel& m, double q, double p) {
  const double full = q * p + q * (q + 1) / 2;
  if (m.sliding_window <= 0 || m.window_layers <= 0) return full;
  const double w = static_cast<double>(m.sliding_window), before_full = std::clamp(w - p, 0.0, q);
  const double windowed = before_full * p + before_full * (before_full + 1) / 2 + (q - before_full) * w;
  const double share = static_cast<double>(m.window_layers) / static_cast<double>(m.layers);
  return (1 - share) * full + share * windowed;
}

namespace {

// Kernels a fused runtime launches per layer besides its GEMMs and attention: two norms (with the
// residual adds), the rotary/cache append, the MLP activation.
constexpr double kElementwiseKernelsPerLayer = 4;
// Hidden-sized reads and writes per token per layer of those kernels: each norm reads the
// residual and the stream and writes both (4 x hidden), twice, plus the activation's inputs.
constexpr double kElementwiseHiddenPerLayer = 10;

bool is_float_precision(const std::string& d) { return d == "fp32" || d == "fp16" || d == "bf16"; }

void check_precision(const std::string& what, const std::string& d, bool int4_allowed) {
  static const std::vector<std::string> names = {"fp32", "fp16", "bf16", "fp8", "int8", "int4"};
  const bool known = std::find(names.begin(), names.end(), d) != names.end();
  if (!known || (d == "int4" && !int4_allowed))
    throw Error(kExitUsage, fmt::format("{} '{}': expected fp32, fp16, bf16, fp8, int8{}", what, d, int4_allowed ? " or int4" : ""));
}

double link_figure(const Device& device, const std::string& key) {
  auto it = device.interconnect.find(key);
  return it == device.interconnect.end() ? 0 : it->second;
}

void set_interconnect(StepSetup& s, const Device& device, const LlmOptions& options) {
  // The link carries a pipeline stage's sends too, one device per stage included.
  const std::string link = options.link.empty() ? (link_figure(device, "nvlink_gbps") > 0 ? "nvlink" : "pcie") : options.link;
  s.link_gbps = link_figure(device, link + "_gbps");
  s.link_latency_us = link_figure(device, link + "_latency_us");
  if (s.devices <= 1) return;
  // A calibrated all-reduce (measured with NCCL) beats the link's datasheet figure.
  s.allreduce_gbps = link_figure(device, "allreduce_bus_gbps");
  s.allreduce_latency_us = link_figure(device, "allreduce_latency_us");
  if (link != "nvlink" && link != "pcie") throw Error(kExitUsage, "--link '" + link + "': expected nvlink or pcie");
  s.allreduce_calibrated = s.allreduce_gbps > 0 && options.link.empty();
  if (s.allreduce_calibrated) {
    if (const AllReduceCurve* curve = device.allreduce_curves.nearest(s.tp)) s.allreduce_curve = *curve;
  } else {
    s.allreduce_gbps = s.link_gbps;
    s.allreduce_latency_us = s.link_latency_us;
  }
  if (s.allreduce_gbps <= 0 || (s.ep > 1 && s.link_gbps <= 0))
    throw Error(kExitUsage, fmt::format("{} {}: the device '{}' has no {} figures in the hardware database "
                                        "([interconnect] {}_gbps, {}_latency_us)", s.ep > 1 ? "--ep" : "--tp",
                                        s.ep > 1 ? s.ep : s.tp, device.id, link, link, link));
}

// --ep: the routed experts spread whole over ep devices, attention and the dense parts split by tp
// within each of the ep / tp replicas that share them.
void set_expert_parallel(StepSetup& s, const DecoderModel& model, const LlmOptions& options) {
  s.ep = options.expert_parallel;
  if (s.ep < 1) throw Error(kExitUsage, "--ep must be at least 1");
  if (s.ep > 1 && model.experts.routed == 0) throw Error(kExitUsage, "--ep: the model has no routed experts");
  if (s.ep > 1 && s.ep % s.tp != 0) throw Error(kExitUsage, fmt::format("--ep {} is not a multiple of --tp {}", s.ep, s.tp));
  if (s.ep > 1 && model.experts.routed % s.ep != 0)
    throw Error(kExitUsage, fmt::format("--ep {} does not divide the {} routed experts", s.ep, model.experts.routed));
  s.devices = std::max(s.tp, s.ep);
  s.attention_replicas = static_cast<double>(s.devices / s.tp);
}

}  // namespace

double precision_bytes(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "int4") return 0.5;
  if (dtype == "fp64") return 8;
  return 1;  // fp8, int8
}

StepSetup make_step_setup(const DecoderModel& model, const Device& device, const LlmOptions& options) {
  StepSetup s;
  s.model = &model;
  s.device = &device;
  const Precision& p = options.precision;
  if (!p.weights.empty()) check_precision("--weights", p.weights, true);
  if (!p.activations.empty()) check_precision("--activations", p.activations, false);
  if (!p.kv_cache.empty()) check_precision("--kv-cache", p.kv_cache, false);
  s.weights = p.weights;  // "" = as stored
  s.act = p.activations.empty() ? (model.act_dtype.empty() ? "fp32" : model.act_dtype) : p.activations;
  s.kv = p.kv_cache.empty() ? (p.activations.empty() && !model.kv_dtype.empty() ? model.kv_dtype : s.act) : p.kv_cache;
  s.act_bytes = precision_bytes(s.act);
  s.kv_bytes = precision_bytes(s.kv);
  // Weight-only quantization dequantizes into the activation dtype; w8a8 and fp8 run 8-bit math.
  s.compute = s.act;
  s.gemm_peak = choose_peak(device, MathPath::kTensor, s.compute);
  // Flash attention computes in the activation dtype (an 8-bit cache is widened on load).
  s.attention_peak = choose_peak(device, MathPath::kTensor, is_float_precision(s.act) ? s.act : "fp16");
  s.bandwidth = device.bandwidth_bytes_per_s();
  if (s.bandwidth <= 0 || s.gemm_peak.flops_per_s <= 0) throw Error(kExitUsage, "the device has no bandwidth or peak");
  s.tp = options.tensor_parallel;
  if (s.tp < 1) throw Error(kExitUsage, "--tp must be at least 1");
  if (model.heads % s.tp != 0)
    throw Error(kExitUsage, fmt::format("--tp {} does not divide the {} query heads", s.tp, model.heads));
  if (model.kv_heads >= s.tp && model.kv_heads % s.tp != 0)
    throw Error(kExitUsage, fmt::format("--tp {} does not divide the {} kv heads", s.tp, model.kv_heads));
  s.kv_heads_per_device = std::max<int64_t>(1, model.kv_heads / s.tp);
  s.heads_per_device = static_cast<double>(model.heads) / s.tp;
  s.collective = options.collective;
  set_expert_parallel(s, model, options);
  set_interconnect(s, device, options);
  return s;
}

double gemm_weight_bytes(const StepSetup& s, const WeightGemm& g) {
  if (s.weights.empty()) return g.stored_bytes;
  const double experts = static_cast<double>(g.experts);
  const double elements = static_cast<double>(g.k) * static_cast<double>(g.n) * experts;
  // int4: an fp16 scale per 128-weight block; int8/fp8: an fp16 scale per output channel.
  if (s.weights == "int4") return elements * 0.5 + elements / 128 * 2;
  if (s.weights == "int8" || s.weights == "fp8") return elements + static_cast<double>(g.n) * experts * 2;
  return elements * precision_bytes(s.weights);
}

double model_weight_bytes(const StepSetup& s) {
  double bytes = 0;
  for (const WeightGemm& g : s.model->gemms) bytes += gemm_weight_bytes(s, g);
  // Embeddings and norms stay in a float type: the activations' when they are float, else fp16.
  if (s.weights.empty() && s.model->act_dtype == s.act) return bytes + s.model->other_weight_bytes;
  return bytes + s.model->other_weight_elements * (is_float_precision(s.act) ? s.act_bytes : 2.0);
}

double kv_bytes_per_token_per_device(const StepSetup& s) {
  return static_cast<double>(s.model->layers) * kv_elements_per_token_per_layer(*s.model, s.kv_heads_per_device) * s.kv_bytes;
}

namespace {

// Per-head widths the attention kernel multiplies, and the cache elements per token it reads, on
// one device. MLA decodes in the latent (the key and value up-projections absorbed into the query
// and output products) and prefills with the heads' own widths.
struct AttentionWidths {
  double qk = 0, v = 0, cache = 0;
};

AttentionWidths attention_widths(const StepSetup& s, int64_t new_tokens) {
  const DecoderModel& m = *s.model;
  const double cache = kv_elements_per_token_per_layer(m, s.kv_heads_per_device);
  if (!m.latent.present()) return {static_cast<double>(m.head_dim), static_cast<double>(m.head_dim), cache};
  const LatentAttention& a = m.latent;
  if (new_tokens == 1) return {static_cast<double>(a.kv_lora_rank + a.rope_head_dim), static_cast<double>(a.kv_lora_rank), cache};
  return {static_cast<double>(a.nope_head_dim + a.rope_head_dim), static_cast<double>(a.v_head_dim), cache};
}

// Flash attention: causal over the new positions, full over the cached ones; the cache read once
// per kv-head group, never a score matrix in memory. `b`: sequences on this device.
double attention_ms(const StepSetup& s, double b, int64_t new_tokens, int64_t past) {
  const AttentionWidths w = attention_widths(s, new_tokens);
  // Sliding-window layers attend to (and read) only their window of the cached positions.
  const double q = static_cast<double>(new_tokens), p = cached_positions(*s.model, static_cast<double>(past));
  const double h = s.heads_per_device;
  const double pairs = attended_pairs(*s.model, q, static_cast<double>(past));
  const double flops = 2 * b * h * (w.qk + w.v) * pairs;
  const double bytes = b * (q * h * (w.qk + w.v) * s.act_bytes + (p + 2 * q) * w.cache * s.kv_bytes);
  return static_cast<double>(s.model->layers) * std::max(flops / s.attention_peak.flops_per_s, bytes / s.bandwidth) * 1e3;
}

// Every weight GEMM on one device: the dense ones on this replica's rows split by tp, the routed
// experts on the whole group's tokens. Adds the GEMMs' output widths per token to `outputs`.
double gemms_ms(const StepSetup& s, double rows, double head_rows, double group_tokens, double& outputs) {
  const double tp = static_cast<double>(s.tp);
  double ms = 0;
  for (const WeightGemm& g : s.model->gemms) {
    GemmWork w;
    if (g.routed()) {
      w = routed_gemm_work(s, g, group_tokens);
    } else {
      const double r = g.lm_head ? head_rows : rows;
      w.flops = 2 * r * g.k * g.n / tp;
      w.bytes = (gemm_weight_bytes(s, g) + r * (g.k + g.n) * s.act_bytes) / tp;
    }
    if (!g.lm_head) outputs += static_cast<double>(g.n) * static_cast<double>(g.routed() ? g.experts_per_token : 1) / tp;
    ms += std::max(w.flops / s.gemm_peak.flops_per_s, w.bytes / s.bandwidth) * 1e3;
  }
  return ms;
}

// Megatron all-reduces (after the attention output and the MLP), the logits gather, and expert
// parallelism's all-to-alls; their kernels added to the step's.
void communication(const StepSetup& s, double rows, double head_rows, double group_tokens, StepTime& t) {
  const DecoderModel& m = *s.model;
  if (s.tp > 1) {
    const double block_bytes = rows * m.hidden * s.act_bytes;
    t.communication_ms += 2 * m.layers * step_allreduce_ms(s, block_bytes);
    // The vocabulary-split LM head gathers its logits: an all-gather moves half an all-reduce's data.
    t.communication_ms +=
        0.5 * step_allreduce_ms(s, head_rows * m.vocab * s.act_bytes);
    t.kernels += 2 * m.layers + 1;
  }
  if (s.ep > 1) {
    t.communication_ms += static_cast<double>(m.experts.moe_layers) * expert_all_to_all_ms(s, group_tokens);
    t.kernels += 2 * static_cast<double>(m.experts.moe_layers);
  }
}

}  // namespace

StepTime predict_step(const StepSetup& s, int64_t batch, int64_t new_tokens, int64_t past) {
  const DecoderModel& m = *s.model;
  // With expert parallelism each attention replica runs its share of the sequences; the step
  // waits for the busiest one.
  const double b = std::ceil(static_cast<double>(batch) / s.attention_replicas), q = static_cast<double>(new_tokens);
  const double rows_all = b * q;
  const double head_rows = m.logits_every_position ? rows_all : b;
  const double group_tokens = static_cast<double>(batch) * q;
  StepTime t;
  double gemm_outputs = 0;
  t.gemm_ms = gemms_ms(s, rows_all, head_rows, group_tokens, gemm_outputs);
  t.attention_ms = attention_ms(s, b, new_tokens, past);
  // The graph's deployed view where known (its elementwise bytes rescaled to the activations'
  // precision), else the estimate of a fused runtime.
  const double elementwise_bytes =
      m.elementwise_bytes_per_token > 0
          ? rows_all * m.elementwise_bytes_per_token * s.act_bytes / precision_bytes(m.act_dtype.empty() ? "fp32" : m.act_dtype)
          : rows_all * s.act_bytes * (m.layers * kElementwiseHiddenPerLayer * m.hidden + 2 * gemm_outputs + 2 * m.hidden);
  t.elementwise_ms = elementwise_bytes / s.bandwidth * 1e3;
  // A MoE layer adds its routing kernel (softmax and top-k over the router's scores).
  t.kernels = m.deployed_kernels > 0 ? m.deployed_kernels
                                     : static_cast<double>(m.gemms.size()) + m.layers * (1 + kElementwiseKernelsPerLayer) + 2 +
                                           static_cast<double>(m.experts.moe_layers);
  communication(s, rows_all, head_rows, group_tokens, t);
  t.launch_ms = t.kernels * s.device->launch_overhead_us * 1e-3;
  return t;
}

MemoryPerDevice memory_per_device(const StepSetup& s, int64_t batch, int64_t context, int64_t prefill_tokens,
                                  double workspace_bytes) {
  const DecoderModel& m = *s.model;
  const double tp = static_cast<double>(s.tp);
  const double sequences = std::ceil(static_cast<double>(batch) / s.attention_replicas);  // on the busiest replica
  MemoryPerDevice mem;
  const double routed = routed_weight_bytes_per_device(s);
  mem.weights_bytes = (model_weight_bytes(s) - routed * (s.ep > 1 ? s.ep : s.tp)) / tp + routed;
  mem.kv_bytes = sequences * cached_positions(m, static_cast<double>(context)) * kv_bytes_per_token_per_device(s);
  // The largest GEMM's input and output of the prefill, beside the residual stream.
  const double rows_all = sequences * static_cast<double>(prefill_tokens);
  double largest = 0;
  for (const WeightGemm& g : m.gemms) {
    const double rows = g.lm_head && !m.logits_every_position ? sequences : rows_all;
    largest = std::max(largest, rows * (g.k + g.n / tp) * s.act_bytes);
  }
  mem.activation_bytes = largest + rows_all * m.hidden * s.act_bytes;
  mem.workspace_bytes = workspace_bytes;
  return mem;
}

}  // namespace modelcost
