// The depth at which `--measure` runs the deployed step of a model too large for the GPU
// (a 70B config.json on one 80 GB card): two reduced depths, the step time extrapolated linearly
// in the layers to the model's own (docs/llm.md, "Measuring").
#include <algorithm>

#include "modelcost/llm.h"

namespace modelcost {
namespace {

constexpr double kFp16 = 2;
constexpr double kUsableShare = 0.9;  // of the free memory: the libraries' workspaces and the CUDA graph need the rest

// MLA's attention on one device: the query products, the latent's (replicated), its up-projection
// twice (the prefill's, and the decode's absorbed query and value products), the output product.
double latent_attention_elements(const DecoderModel& m, int64_t tp) {
  const LatentAttention& a = m.latent;
  const double h = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads / tp);
  const double r = static_cast<double>(a.kv_lora_rank), qk = static_cast<double>(a.nope_head_dim + a.rope_head_dim);
  const double ql = static_cast<double>(a.q_lora_rank), v = static_cast<double>(a.v_head_dim);
  const double query = ql > 0 ? h * ql + ql + ql * heads * qk : h * heads * qk;
  const double up = r * heads * static_cast<double>(a.nope_head_dim + a.v_head_dim);
  return query + h * (r + static_cast<double>(a.rope_head_dim)) + r + 2 * up + heads * v * h + 2 * h;
}

// Cache elements of one position of one layer on one device (kv heads replicated when fewer than tp).
double cache_elements(const DecoderModel& m, int64_t tp) {
  return kv_elements_per_token_per_layer(m, std::max<int64_t>(1, m.kv_heads / tp));
}

// One layer's weight elements on one device: attention, norms and the MLP, dense or the experts'
// (the router, every routed expert's gated MLP and the shared one, split by tp).
double layer_weight_elements(const DecoderModel& m, int64_t tp, bool moe) {
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double heads = static_cast<double>(m.heads / tp), kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / tp));
  const double attention = m.latent.present() ? latent_attention_elements(m, tp) : h * (heads + 2 * kv) * d + h * heads * d + 2 * h;
  if (moe) {
    const ExpertLayers& e = m.experts;
    const double routed = static_cast<double>(e.routed) * 3 * h * static_cast<double>(e.width / tp);
    return attention + h * static_cast<double>(e.routed) + routed + 3 * h * static_cast<double>(e.shared_width / tp);
  }
  const double width = static_cast<double>(m.mlp_intermediate / tp), mlp_out = (m.gated_mlp ? 2 : 1) * width;
  return attention + h * mlp_out + width * h;
}

}  // namespace

double deployed_step_device_bytes(const DecoderModel& m, int64_t layers, int64_t batch, int64_t context, int64_t tp) {
  const double h = static_cast<double>(m.hidden);
  // The dense layers come first, as the deployed step runs them, keeping at least one MoE layer.
  const int64_t all_dense = m.layers - m.experts.moe_layers;
  const int64_t dense = m.experts.moe_layers > 0 ? std::min(all_dense, std::max<int64_t>(layers - 1, 0)) : layers;
  const double weights = static_cast<double>(dense) * layer_weight_elements(m, tp, false) +
                         static_cast<double>(layers - dense) * layer_weight_elements(m, tp, m.experts.routed > 0);
  const double per_layer_cache = static_cast<double>(batch) * static_cast<double>(context) * cache_elements(m, tp);
  const double vocab = static_cast<double>(m.vocab), vocab_per_device = static_cast<double>((m.vocab + tp - 1) / tp);
  const double outside = vocab * h + h + vocab_per_device * h;  // embedding, final norm, LM head slice
  return kFp16 * (weights + static_cast<double>(layers) * per_layer_cache + outside);
}

std::vector<int64_t> measurable_depths(const DecoderModel& m, int64_t batch, int64_t context, int64_t tp, double free_bytes) {
  const double budget = free_bytes * kUsableShare;
  if (deployed_step_device_bytes(m, m.layers, batch, context, tp) <= budget) return {m.layers};
  // The deepest that fits (the bytes grow with the layers).
  int64_t fits = 0, fails = m.layers;
  while (fails - fits > 1) {
    const int64_t mid = fits + (fails - fits) / 2;
    (deployed_step_device_bytes(m, mid, batch, context, tp) <= budget ? fits : fails) = mid;
  }
  if (fits < 2) return {};
  // A mixture whose first layers are dense (DeepSeek's): both runs keep all of them, so the two
  // differ by MoE layers only and the line through them is exact; half the depth would hold fewer
  // dense layers and take a dense layer's time for a MoE layer's.
  const int64_t dense = m.experts.moe_layers > 0 ? m.layers - m.experts.moe_layers : 0;
  if (dense > 0 && fits >= dense + 2) return {fits, std::max(fits / 2, dense + 1)};
  return {fits, fits / 2};
}

double extrapolate_to_depth(int64_t full, int64_t deep, double deep_value, int64_t shallow, double shallow_value) {
  if (deep == shallow) return deep_value;
  const double per_layer = (deep_value - shallow_value) / static_cast<double>(deep - shallow);
  return deep_value + per_layer * static_cast<double>(full - deep);
}

}  // namespace modelcost
