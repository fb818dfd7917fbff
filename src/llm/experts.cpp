// Mixture of experts in the step model (docs/llm.md, "Mixture of experts"): the routed experts'
// products on one device, the experts a batch touches, the all-to-all of expert parallelism; and
// the model-level counts (parameters, KV elements) that also hold for dense decoders.
#include <algorithm>
#include <cmath>

#include "llm/step_model.h"

namespace modelcost {

double expected_experts_touched(double experts, double per_token, double tokens) {
  if (experts <= 0 || per_token <= 0 || tokens <= 0) return 0;
  if (per_token >= experts) return experts;
  // Each expert is missed by one token with probability 1 - k/E, by all of them with its power.
  return experts * (1 - std::pow(1 - per_token / experts, tokens));
}

ParameterCount count_parameters(const DecoderModel& m) {
  ParameterCount p;
  for (const WeightGemm& g : m.gemms) {
    // A graph's GEMM whose weight another one already stores (stored_bytes 0) is not counted again.
    if (m.source == "onnx" && g.stored_bytes <= 0) continue;
    const double matrix = static_cast<double>(g.k) * static_cast<double>(g.n);
    p.total += matrix * static_cast<double>(g.experts);
    p.active_per_token += matrix * static_cast<double>(g.routed() ? g.experts_per_token : g.experts);
  }
  p.total += m.other_weight_elements;
  p.active_per_token += m.other_weight_elements;
  return p;
}

double kv_elements_per_token_per_layer(const DecoderModel& m, int64_t kv_heads) {
  if (m.latent.present()) return static_cast<double>(m.latent.kv_lora_rank + m.latent.rope_head_dim);
  return 2.0 * static_cast<double>(kv_heads) * static_cast<double>(m.head_dim);
}

double cached_positions(const DecoderModel& m, double context) {
  if (m.sliding_window <= 0 || m.window_layers <= 0 || m.layers <= 0) return context;
  const double windowed = static_cast<double>(m.window_layers) / static_cast<double>(m.layers);
  return (1 - windowed) * context + windowed * std::min(context, static_cast<double>(m.sliding_window));
}

// Routed experts are whole on each device with expert parallelism, else split like every GEMM.
static double expert_shards(const StepSetup& s) { return static_cast<double>(s.ep > 1 ? s.ep : s.tp); }

GemmWork routed_gemm_work(const StepSetup& s, const WeightGemm& g, double tokens) {
  const double experts = static_cast<double>(g.experts), per_token = static_cast<double>(g.experts_per_token);
  const double per_expert_bytes = gemm_weight_bytes(s, g) / experts;
  const double pairs = tokens * per_token;  // token-expert pairs of the whole group
  GemmWork w;
  w.flops = 2 * pairs * static_cast<double>(g.k) * static_cast<double>(g.n) / expert_shards(s);
  w.bytes = (expected_experts_touched(experts, per_token, tokens) * per_expert_bytes +
             pairs * static_cast<double>(g.k + g.n) * s.act_bytes) / expert_shards(s);
  return w;
}

double routed_weight_bytes_per_device(const StepSetup& s) {
  double bytes = 0;
  for (const WeightGemm& g : s.model->gemms)
    if (g.routed()) bytes += gemm_weight_bytes(s, g);
  return bytes / expert_shards(s);
}

double expert_all_to_all_ms(const StepSetup& s, double tokens) {
  if (s.ep <= 1 || s.model->experts.routed == 0) return 0;
  const double n = static_cast<double>(s.ep);
  // Each device sends its tokens' hidden states to the devices of their experts and takes the
  // results back: (n-1)/n of its token-expert pairs leave it, each way.
  const double sent = tokens / n * static_cast<double>(s.model->experts.per_token) * static_cast<double>(s.model->hidden) *
                      s.act_bytes * (n - 1) / n;
  const double one_way = (n - 1) * s.link_latency_us * 1e-6 + sent / (s.link_gbps * 1e9);
  return 2 * one_way * 1e3;
}

}  // namespace modelcost
