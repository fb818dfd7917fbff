// A decoder described by a Hugging Face config.json, as the layer shapes the weight GEMMs and the
// other weights are built from (model_config.cpp reads it, config_gemms.cpp builds the weights).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelcost/llm.h"

namespace modelcost {

// One family's layer: which projections carry biases, how many norms, the MLP's form.
struct ConfigShape {
  std::string architecture;           // model_type
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  int64_t intermediate = 0;           // the dense MLP's width
  bool gated_mlp = true;              // SiLU/GELU(gate) x up; false: one up projection (GPT-NeoX, Falcon)
  bool qkv_bias = false, output_bias = false, mlp_bias = false;
  int64_t norms_per_layer = 2;        // 4 in Gemma 2/3 (before and after attention and MLP)
  bool layer_norm = false;            // LayerNorm (weight and bias) instead of RMSNorm
  bool qk_norm = false;               // a norm of head_dim on queries and keys (Qwen3, Gemma 3)
  bool tied_embeddings = false;       // the LM head reads the embedding table
  int64_t max_positions = 0;
  int64_t sliding_window = 0, window_layers = 0;  // layers that attend to (and cache) only the last sliding_window positions
  LatentAttention latent;             // MLA (DeepSeek-V2/V3)
  ExpertLayers experts;               // routed experts (moe_layers filled from moe_layer below)
  std::vector<bool> moe_layer;        // per layer: experts instead of the dense MLP
  bool router_bias = false;           // DeepSeek-V3's e_score_correction_bias (one per expert)
  bool shared_expert_gate = false;    // Qwen-MoE's sigmoid gate on the shared expert (hidden x 1)
  std::string weights_dtype = "bf16"; // torch_dtype
  bool fp8_block_weights = false;     // quantization_config fp8 with 128 x 128 blocks: layer GEMMs stored fp8 + fp32 scales
  std::vector<std::string> how;       // how figures were found or defaulted
};

// The weight GEMMs (in layer order, the LM head last) and the other weights (embeddings, norms,
// biases) of `shape` into `model`: exact element counts, bytes at the stored precision.
void build_config_weights(const ConfigShape& shape, DecoderModel& model);

}  // namespace modelcost
