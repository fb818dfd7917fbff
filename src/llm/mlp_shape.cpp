// The MLP of a decoder layer, read off its weight GEMMs: the down projection takes the MLP's
// width back to the hidden size; one up projection of that width (plain MLP), two of them or one
// of twice the width (gated: SiLU(gate) * up) feed it.
#include <fmt/format.h>

#include "llm/recognition_parts.h"

namespace modelcost {

void read_mlp_shape(DecoderModel& m) {
  std::vector<const WeightGemm*> layer_gemms;
  for (const WeightGemm& g : m.gemms)
    if (!g.lm_head) layer_gemms.push_back(&g);
  if (m.layers < 1 || layer_gemms.empty() || layer_gemms.size() % static_cast<size_t>(m.layers) != 0) return;
  const size_t per_layer = layer_gemms.size() / static_cast<size_t>(m.layers);
  // Head counts come from attributes: a product past int64 matches no GEMM's K (-1).
  int64_t attention_width = -1;
  if (__builtin_mul_overflow(m.heads, m.head_dim, &attention_width)) attention_width = -1;
  int64_t width = 0;
  for (size_t i = 0; i < per_layer && width == 0; ++i)
    if (layer_gemms[i]->n == m.hidden && layer_gemms[i]->k != attention_width) width = layer_gemms[i]->k;
  if (width <= 0) return;
  int ups = 0;
  bool fused_gate_up = false;
  for (size_t i = 0; i < per_layer; ++i) {
    const WeightGemm& g = *layer_gemms[i];
    if (g.k != m.hidden) continue;
    ups += g.n == width;
    fused_gate_up = fused_gate_up || g.n == 2 * width;
  }
  if (ups == 0 && !fused_gate_up) return;
  m.mlp_intermediate = width;
  m.gated_mlp = ups >= 2 || fused_gate_up;
  m.how.push_back(fmt::format("MLP: {} of width {} (the down projection's K; {})", m.gated_mlp ? "gated" : "plain", width,
                              m.gated_mlp ? "a gate and an up projection feed it" : "one up projection feeds it"));
}

}  // namespace modelcost
