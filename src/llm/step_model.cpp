#include "llm/step_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "modelcost/errors.h"

namespace modelcost {
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
  if (s.tp <= 1) return;
  // A calibrated all-reduce (measured with NCCL) beats the link's datasheet figure.
  s.allreduce_gbps = link_figure(device, "allreduce_bus_gbps");
  s.allreduce_latency_us = link_figure(device, "allreduce_latency_us");
  const std::string link = options.link.empty() ? (link_figure(device, "nvlink_gbps") > 0 ? "nvlink" : "pcie") : options.link;
  if (link != "nvlink" && link != "pcie") throw Error(kExitUsage, "--link '" + link + "': expected nvlink or pcie");
  s.allreduce_calibrated = s.allreduce_gbps > 0 && options.link.empty();
  if (!s.allreduce_calibrated) {
    s.allreduce_gbps = link_figure(device, link + "_gbps");
    s.allreduce_latency_us = link_figure(device, link + "_latency_us");
  }
  if (s.allreduce_gbps <= 0)
    throw Error(kExitUsage, fmt::format("--tp {}: the device '{}' has no {} figures in the hardware database "
                                        "([interconnect] {}_gbps, {}_latency_us)", s.tp, device.id, link, link, link));
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
  set_interconnect(s, device, options);
  return s;
}

double gemm_weight_bytes(const StepSetup& s, const WeightGemm& g) {
  if (s.weights.empty()) return g.stored_bytes;
  const double elements = static_cast<double>(g.k) * static_cast<double>(g.n);
  // int4: an fp16 scale per 128-weight block; int8/fp8: an fp16 scale per output channel.
  if (s.weights == "int4") return elements * 0.5 + elements / 128 * 2;
  if (s.weights == "int8" || s.weights == "fp8") return elements + static_cast<double>(g.n) * 2;
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
  return 2.0 * s.model->layers * s.kv_heads_per_device * s.model->head_dim * s.kv_bytes;
}

StepTime predict_step(const StepSetup& s, int64_t batch, int64_t new_tokens, int64_t past) {
  const DecoderModel& m = *s.model;
  const double tp = static_cast<double>(s.tp);
  const double b = static_cast<double>(batch), q = static_cast<double>(new_tokens), p = static_cast<double>(past);
  const double rows_all = b * q;
  const double head_rows = m.logits_every_position ? rows_all : b;
  StepTime t;
  for (const WeightGemm& g : m.gemms) {
    const double rows = g.lm_head ? head_rows : rows_all;
    const double flops = 2 * rows * g.k * g.n / tp;
    const double bytes = (gemm_weight_bytes(s, g) + rows * (g.k + g.n) * s.act_bytes) / tp;
    t.gemm_ms += std::max(flops / s.gemm_peak.flops_per_s, bytes / s.bandwidth) * 1e3;
  }
  // Flash attention: causal over the new positions, full over the cached ones; K and V read once
  // per kv head group, never a score matrix in memory.
  const double d = static_cast<double>(m.head_dim), h = s.heads_per_device, kvh = static_cast<double>(s.kv_heads_per_device);
  const double pairs = q * p + q * (q + 1) / 2;
  const double attention_flops = 4 * b * h * d * pairs;
  const double attention_bytes = b * (q * h * d * 2 * s.act_bytes + (p + 2 * q) * 2 * kvh * d * s.kv_bytes);
  t.attention_ms = m.layers * std::max(attention_flops / s.attention_peak.flops_per_s, attention_bytes / s.bandwidth) * 1e3;
  double gemm_outputs = 0;
  for (const WeightGemm& g : m.gemms)
    if (!g.lm_head) gemm_outputs += static_cast<double>(g.n) / tp;
  // The graph's deployed view where known (its elementwise bytes rescaled to the activations'
  // precision), else the estimate of a fused runtime.
  const double elementwise_bytes =
      m.elementwise_bytes_per_token > 0
          ? rows_all * m.elementwise_bytes_per_token * s.act_bytes / precision_bytes(m.act_dtype.empty() ? "fp32" : m.act_dtype)
          : rows_all * s.act_bytes * (m.layers * kElementwiseHiddenPerLayer * m.hidden + 2 * gemm_outputs + 2 * m.hidden);
  t.elementwise_ms = elementwise_bytes / s.bandwidth * 1e3;
  t.kernels = m.deployed_kernels > 0 ? m.deployed_kernels
                                     : static_cast<double>(m.gemms.size()) + m.layers * (1 + kElementwiseKernelsPerLayer) + 2;
  if (s.tp > 1) {
    // Megatron: an all-reduce after the attention output and after the MLP down projection.
    const double block_bytes = rows_all * m.hidden * s.act_bytes;
    t.communication_ms = 2 * m.layers * allreduce_ms(block_bytes, s.tp, s.allreduce_gbps, s.allreduce_latency_us, s.collective);
    // The vocabulary-split LM head gathers its logits: an all-gather moves half an all-reduce's data.
    t.communication_ms +=
        0.5 * allreduce_ms(head_rows * m.vocab * s.act_bytes, s.tp, s.allreduce_gbps, s.allreduce_latency_us, s.collective);
    t.kernels += 2 * m.layers + 1;
  }
  t.launch_ms = t.kernels * s.device->launch_overhead_us * 1e-3;
  return t;
}

MemoryPerDevice memory_per_device(const StepSetup& s, int64_t batch, int64_t context, int64_t prefill_tokens,
                                  double workspace_bytes) {
  const DecoderModel& m = *s.model;
  const double tp = static_cast<double>(s.tp);
  MemoryPerDevice mem;
  mem.weights_bytes = model_weight_bytes(s) / tp;
  mem.kv_bytes = static_cast<double>(batch) * static_cast<double>(context) * kv_bytes_per_token_per_device(s);
  // The largest GEMM's input and output of the prefill, beside the residual stream.
  const double rows_all = static_cast<double>(batch) * static_cast<double>(prefill_tokens);
  double largest = 0;
  for (const WeightGemm& g : m.gemms) {
    const double rows = g.lm_head && !m.logits_every_position ? static_cast<double>(batch) : rows_all;
    largest = std::max(largest, rows * (g.k + g.n / tp) * s.act_bytes);
  }
  mem.activation_bytes = largest + rows_all * m.hidden * s.act_bytes;
  mem.workspace_bytes = workspace_bytes;
  return mem;
}

}  // namespace modelcost
