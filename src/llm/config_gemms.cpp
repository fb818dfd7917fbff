// The weights of a decoder described by a config.json: every linear layer as a weight GEMM of its
// exact shape, everything else (embeddings, norms, biases) as other weights. The parameter counts
// of docs/llm.md ("From a config.json") follow from these shapes alone.
#include <fmt/format.h>

#include <cmath>

#include "llm/config_shape.h"

namespace modelcost {
namespace {

constexpr double kFp8BlockEdge = 128;  // quantization_config weight_block_size [128, 128]

class WeightBuilder {
 public:
  WeightBuilder(const ConfigShape& shape, DecoderModel& model)
      : shape_(shape), model_(model), dtype_bytes_(precision_bytes(shape.weights_dtype)) {}

  // A linear layer of `layer` (or -1 outside the layers): K inputs, N outputs, `experts` copies of
  // which each token runs `per_token` (0: every token runs it). Layer GEMMs may be stored fp8.
  void gemm(int64_t layer, const std::string& name, int64_t k, int64_t n, int64_t experts = 1, int64_t per_token = 0) {
    WeightGemm g;
    g.node = layer >= 0 ? fmt::format("layers.{}.{}", layer, name) : name;
    g.op_type = "Linear";
    g.k = k;
    g.n = n;
    g.experts = experts;
    g.experts_per_token = per_token;
    const double elements = static_cast<double>(k) * static_cast<double>(n) * static_cast<double>(experts);
    if (shape_.fp8_block_weights && layer >= 0 && name != "router") {
      const double blocks = std::ceil(k / kFp8BlockEdge) * std::ceil(n / kFp8BlockEdge) * static_cast<double>(experts);
      g.stored_bytes = elements + blocks * 4;  // one fp32 scale per block
      g.stored_dtype = "fp8";
    } else {
      g.stored_bytes = elements * dtype_bytes_;
      g.stored_dtype = shape_.weights_dtype;
    }
    model_.gemm_weight_bytes += g.stored_bytes;
    model_.gemms.push_back(g);
  }
  // Norm weights, biases, embedding rows: stored at the config's dtype.
  void other(double elements) {
    model_.other_weight_elements += elements;
    model_.other_weight_bytes += elements * dtype_bytes_;
  }
  void norm(int64_t width) { other(static_cast<double>(width) * (shape_.layer_norm ? 2 : 1)); }
  void bias(bool present, int64_t width) {
    if (present) other(static_cast<double>(width));
  }

 private:
  const ConfigShape& shape_;
  DecoderModel& model_;
  double dtype_bytes_;
};

void attention_weights(const ConfigShape& s, int64_t layer, WeightBuilder& w) {
  const int64_t h = s.hidden, q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  w.gemm(layer, "q_proj", h, q);
  w.gemm(layer, "k_proj", h, kv);
  w.gemm(layer, "v_proj", h, kv);
  w.bias(s.qkv_bias, q + 2 * kv);
  if (s.qk_norm) w.other(2.0 * static_cast<double>(s.head_dim));
  w.gemm(layer, "o_proj", q, h);
  w.bias(s.output_bias, h);
}

// DeepSeek's MLA: queries through an optional low-rank pair, keys and values through the
// compressed latent (kv_a, its norm, kv_b), the output from the heads' values.
void latent_attention_weights(const ConfigShape& s, int64_t layer, WeightBuilder& w) {
  const LatentAttention& a = s.latent;
  const int64_t h = s.hidden, q = s.heads * (a.nope_head_dim + a.rope_head_dim);
  if (a.q_lora_rank > 0) {
    w.gemm(layer, "q_a_proj", h, a.q_lora_rank);
    w.other(static_cast<double>(a.q_lora_rank));  // q_a_layernorm
    w.gemm(layer, "q_b_proj", a.q_lora_rank, q);
  } else {
    w.gemm(layer, "q_proj", h, q);
  }
  w.gemm(layer, "kv_a_proj_with_mqa", h, a.kv_lora_rank + a.rope_head_dim);
  w.other(static_cast<double>(a.kv_lora_rank));  // kv_a_layernorm
  w.gemm(layer, "kv_b_proj", a.kv_lora_rank, s.heads * (a.nope_head_dim + a.v_head_dim));
  w.gemm(layer, "o_proj", s.heads * a.v_head_dim, h);
}

// A dense MLP of `width` (gate and up, or one up projection; then down), `experts` copies.
void mlp_weights(const ConfigShape& s, int64_t layer, const std::string& prefix, int64_t width, int64_t experts,
                 int64_t per_token, WeightBuilder& w) {
  if (s.gated_mlp) {
    w.gemm(layer, prefix + "gate_up_proj", s.hidden, 2 * width, experts, per_token);
    w.bias(s.mlp_bias, 2 * width * experts);
  } else {
    w.gemm(layer, prefix + "up_proj", s.hidden, width, experts, per_token);
    w.bias(s.mlp_bias, width * experts);
  }
  w.gemm(layer, prefix + "down_proj", width, s.hidden, experts, per_token);
  w.bias(s.mlp_bias, s.hidden * experts);
}

void expert_weights(const ConfigShape& s, int64_t layer, WeightBuilder& w) {
  const ExpertLayers& e = s.experts;
  w.gemm(layer, "router", s.hidden, e.routed);
  w.bias(s.router_bias, e.routed);
  mlp_weights(s, layer, "experts.", e.width, e.routed, e.per_token, w);
  if (e.shared_width > 0) mlp_weights(s, layer, "shared_experts.", e.shared_width, 1, 0, w);
  if (s.shared_expert_gate) w.gemm(layer, "shared_expert_gate", s.hidden, 1);
}

}  // namespace

void build_config_weights(const ConfigShape& s, DecoderModel& model) {
  WeightBuilder w(s, model);
  // The embedding table: the LM head's weight when tied (stored once, with the GEMM).
  if (!s.tied_embeddings) w.other(static_cast<double>(s.vocab) * static_cast<double>(s.hidden));
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    for (int64_t i = 0; i < s.norms_per_layer; ++i) w.norm(s.hidden);
    if (s.latent.present()) latent_attention_weights(s, layer, w);
    else attention_weights(s, layer, w);
    if (s.moe_layer[static_cast<size_t>(layer)]) expert_weights(s, layer, w);
    else mlp_weights(s, layer, "mlp.", s.intermediate, 1, 0, w);
  }
  w.norm(s.hidden);  // the final norm
  // The LM head runs on the last position of each sequence only, as serving runtimes do; it is
  // kept at the config's dtype where the layers are fp8.
  ConfigShape head_shape = s;
  head_shape.fp8_block_weights = false;
  WeightBuilder(head_shape, model).gemm(-1, "lm_head", s.hidden, s.vocab);
  model.gemms.back().lm_head = true;
  model.gemms.back().per_position = false;
  if (s.tied_embeddings) model.gemms.back().node = "lm_head (tied to the embedding table)";
}

}  // namespace modelcost
