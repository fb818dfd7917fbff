// The depth at which `--measure` runs the deployed step of a model too large for the GPU
// (a 70B config.json on one 80 GB card): two reduced depths, the step time extrapolated linearly
// in the layers to the model's own (docs/llm.md, "Measuring").
#include <algorithm>

#include "modelcost/llm.h"

namespace modelcost {
namespace {

constexpr double kFp16 = 2;
constexpr double kUsableShare = 0.9;  // of the free memory: the libraries' workspaces and the CUDA graph need the rest

// One layer's weight elements on one device: attention, norms and the MLP, dense or the experts'
// (the router, every routed expert's gated MLP and the shared one, split by tp).
double layer_weight_elements(const DecoderModel& m, int64_t tp, bool moe) {
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double heads = static_cast<double>(m.heads / tp), kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / tp));
  const double attention = h * (heads + 2 * kv) * d + h * heads * d + 2 * h;
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
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / tp));
  // The dense layers come first, as the deployed step runs them.
  const int64_t dense = std::min(layers, m.layers - m.experts.moe_layers);
  const double weights = static_cast<double>(dense) * layer_weight_elements(m, tp, false) +
                         static_cast<double>(layers - dense) * layer_weight_elements(m, tp, m.experts.routed > 0);
  const double per_layer_cache = 2 * static_cast<double>(batch) * kv * static_cast<double>(context) * d;
  const double vocab = static_cast<double>(m.vocab), vocab_per_device = static_cast<double>((m.vocab + tp - 1) / tp);
  const double outside = vocab * h + h + vocab_per_device * h;  // embedding, final norm, LM head slice
  return kFp16 * (weights + static_cast<double>(layers) * per_layer_cache + outside);
}

std::vector<int64_t> measurable_depths(const DecoderModel& m, int64_t batch, int64_t context, int64_t tp, double free_bytes) {
  const double budget = free_bytes * kUsableShare;
  if (deployed_step_device_bytes(m, m.layers, batch, context, tp) <= budget) return {m.layers};
  const double fixed = deployed_step_device_bytes(m, 0, batch, context, tp);
  // The larger of a dense and a MoE layer: what any added layer may take.
  const double per_layer = kFp16 * (std::max(layer_weight_elements(m, tp, false), layer_weight_elements(m, tp, m.experts.routed > 0)) +
                                    2 * static_cast<double>(batch) * static_cast<double>(std::max<int64_t>(1, m.kv_heads / tp)) *
                                        static_cast<double>(context) * static_cast<double>(m.head_dim));
  const int64_t deepest = per_layer > 0 ? static_cast<int64_t>((budget - fixed) / per_layer) : 0;
  if (deepest < 2) return {};
  return {deepest, deepest / 2};
}

double extrapolate_to_depth(int64_t full, int64_t deep, double deep_value, int64_t shallow, double shallow_value) {
  if (deep == shallow) return deep_value;
  const double per_layer = (deep_value - shallow_value) / static_cast<double>(deep - shallow);
  return deep_value + per_layer * static_cast<double>(full - deep);
}

}  // namespace modelcost
