// A Hugging Face config.json as a decoder (docs/llm.md, "From a config.json"): the families'
// fields read into one ConfigShape, then the same DecoderModel the graph recognition builds.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "llm/config_fields.h"
#include "llm/config_shape.h"
#include "modelcost/errors.h"

namespace modelcost {
namespace {

constexpr std::streamsize kLargestConfig = 16 << 20;  // config.json files are a few KiB
constexpr int64_t kMostLayers = 4096;                 // published decoders have at most a few hundred

const std::set<std::string>& llama_like() {
  static const std::set<std::string> types = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3",
                                              "gemma3_text", "phi3", "mixtral", "qwen2_moe", "qwen3_moe",
                                              "deepseek_v2", "deepseek_v3"};
  return types;
}

const char* kSupported = "llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3, phi3, mixtral, qwen2_moe, qwen3_moe, "
                         "deepseek_v2, deepseek_v3, gpt_neox, falcon";

// Deeper than any config.json (a few levels), shallow enough for every recursive use of the value.
bool nested_too_deep(const std::string& text) {
  constexpr int kDeepest = 64;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') depth += 1;
    else if (c == ']' || c == '}') depth -= 1;
    if (depth > kDeepest) return true;
  }
  return false;
}

std::optional<nlohmann::json> read_json_object(const std::string& path, bool quiet) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (quiet) return std::nullopt;
    throw Error(kExitUnreadable, "cannot read the file");
  }
  std::string text(static_cast<size_t>(kLargestConfig) + 1, '\0');
  in.read(text.data(), kLargestConfig + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kLargestConfig)) {
    if (quiet) return std::nullopt;
    throw Error(kExitInvalidModel, "config.json: larger than 16 MiB, not a model description");
  }
  if (nested_too_deep(text)) {
    if (quiet) return std::nullopt;
    throw Error(kExitInvalidModel, "config.json: nested more than 64 deep, not a model description");
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    if (quiet) return std::nullopt;
    throw Error(kExitInvalidModel, "config.json: not a JSON object");
  }
  return j;
}

// Sliding-window layers: listed in layer_types where the config has it, else by each family's rule
// (Mistral: all of them; Gemma 2: every other one; Gemma 3: all but every sliding_window_pattern-th;
// Qwen with use_sliding_window: those from max_window_layers on).
void read_sliding_window(const ConfigFields& f, const nlohmann::json& j, ConfigShape& s) {
  const std::string& t = s.architecture;
  s.sliding_window = f.count_or("sliding_window", 0);
  if (s.sliding_window == 0) return;
  if (j.contains("layer_types") && j.at("layer_types").is_array()) {
    for (const auto& kind : j.at("layer_types")) s.window_layers += kind.is_string() && kind.get<std::string>() == "sliding_attention";
  } else if (t == "mistral") {
    s.window_layers = s.layers;
  } else if (t == "gemma2") {
    s.window_layers = (s.layers + 1) / 2;
  } else if (t == "gemma3" || t == "gemma3_text") {
    s.window_layers = s.layers - s.layers / std::max<int64_t>(1, f.count_or("sliding_window_pattern", 6));
  } else if (t.rfind("qwen", 0) == 0 && f.flag_or("use_sliding_window", false)) {
    s.window_layers = std::max<int64_t>(0, s.layers - f.count_or("max_window_layers", s.layers));
  }
  s.window_layers = std::min(s.window_layers, s.layers);
  if (s.window_layers == 0) s.sliding_window = 0;
}

// Multimodal configs (Gemma 3) describe the language model in text_config.
const nlohmann::json& language_model(const nlohmann::json& j) {
  auto it = j.find("text_config");
  return it != j.end() && it->is_object() ? *it : j;
}

std::string model_type(const nlohmann::json& j) {
  const ConfigFields top(j);
  std::string type = ConfigFields(language_model(j)).text_or("model_type", top.text_or("model_type", ""));
  if (type.empty()) throw Error(kExitInvalidModel, "config.json: missing field 'model_type' (the architecture)");
  return type;
}

std::string weights_dtype(const ConfigFields& f, const ConfigFields& top, ConfigShape& s) {
  const std::string name = f.text_or("torch_dtype", top.text_or("torch_dtype", top.text_or("dtype", "")));
  if (name == "bfloat16") return "bf16";
  if (name == "float16") return "fp16";
  if (name == "float32") return "fp32";
  if (!name.empty()) throw Error(kExitInvalidModel, "config.json field 'torch_dtype': '" + name + "' is not bfloat16, float16 or float32");
  s.how.push_back("no torch_dtype: weights taken as bf16");
  return "bf16";
}

void read_quantization(const ConfigFields& top, ConfigShape& s) {
  if (!top.has("quantization_config")) return;
  const nlohmann::json& q = top.member("quantization_config");
  const std::string method = q.is_object() ? ConfigFields(q).text_or("quant_method", "") : "";
  if (method == "fp8" && q.contains("weight_block_size")) {
    s.fp8_block_weights = true;
    s.how.push_back("quantization_config fp8 in 128 x 128 blocks: the layers' GEMMs stored fp8 with an fp32 scale per block");
    return;
  }
  s.how.push_back(fmt::format("quantization_config '{}' is not modelled: weights at torch_dtype (use --weights int4 or int8)",
                              method.empty() ? "?" : method));
}

// num_hidden_layers (Falcon: n_layer), bounded so that a hostile file cannot ask for millions of layers.
int64_t layer_count(const ConfigFields& f) {
  const int64_t layers = f.count_either("num_hidden_layers", "n_layer", "decoder layers");
  if (layers > kMostLayers)
    throw Error(kExitInvalidModel, fmt::format("config.json field 'num_hidden_layers': {} layers (at most {})", layers, kMostLayers));
  return layers;
}

void read_attention_heads(const ConfigFields& f, ConfigShape& s) {
  s.heads = f.count("num_attention_heads", "query heads");
  s.kv_heads = f.count_or("num_key_value_heads", s.heads);
  if (s.kv_heads == 0 || s.heads % s.kv_heads != 0)
    throw Error(kExitInvalidModel, fmt::format("config.json field 'num_key_value_heads': {} does not divide the {} query heads",
                                               s.kv_heads, s.heads));
  s.head_dim = f.count_or("head_dim", 0);
  if (s.head_dim == 0) {
    if (s.hidden % s.heads != 0)
      throw Error(kExitInvalidModel, "config.json: missing field 'head_dim' (hidden_size is not a multiple of the heads)");
    s.head_dim = s.hidden / s.heads;
  }
}

// DeepSeek-V2/V3: MLA, shared experts, the first layers dense.
void read_deepseek(const ConfigFields& f, ConfigShape& s) {
  LatentAttention& a = s.latent;
  a.kv_lora_rank = f.count("kv_lora_rank", "MLA latent width");
  a.q_lora_rank = f.count_or("q_lora_rank", 0);
  a.rope_head_dim = f.count("qk_rope_head_dim", "MLA rotary key width");
  a.nope_head_dim = f.count("qk_nope_head_dim", "MLA query/key width without rotary");
  a.v_head_dim = f.count("v_head_dim", "MLA value width");
  s.head_dim = a.nope_head_dim + a.rope_head_dim;
  s.kv_heads = s.heads;
  if (f.count_or("n_routed_experts", 0) == 0) return;
  s.experts.routed = f.count("n_routed_experts", "routed experts");
  s.experts.per_token = f.count("num_experts_per_tok", "experts per token");
  s.experts.width = f.count("moe_intermediate_size", "routed expert width");
  s.experts.shared_width = f.count_or("n_shared_experts", 0) * s.experts.width;
  s.router_bias = f.text_or("topk_method", "") == "noaux_tc";
  const int64_t first_dense = f.count_or("first_k_dense_replace", 0), every = std::max<int64_t>(1, f.count_or("moe_layer_freq", 1));
  for (int64_t i = 0; i < s.layers; ++i) s.moe_layer[static_cast<size_t>(i)] = i >= first_dense && i % every == 0;
  if (f.count_or("num_nextn_predict_layers", 0) > 0)
    s.how.push_back("the multi-token-prediction layer is not part of the served model and is not counted");
}

// Qwen-MoE (Qwen1.5/2 with a shared expert, Qwen3 without): experts in every decoder_sparse_step-th layer.
void read_qwen_moe(const ConfigFields& f, const nlohmann::json& j, ConfigShape& s) {
  s.experts.routed = f.count("num_experts", "routed experts");
  s.experts.per_token = f.count("num_experts_per_tok", "experts per token");
  s.experts.width = f.count("moe_intermediate_size", "routed expert width");
  s.experts.shared_width = f.count_or("shared_expert_intermediate_size", 0);
  s.shared_expert_gate = s.experts.shared_width > 0;
  const int64_t step = std::max<int64_t>(1, f.count_or("decoder_sparse_step", 1));
  std::set<int64_t> dense_only;
  if (j.contains("mlp_only_layers") && j.at("mlp_only_layers").is_array())
    for (const auto& v : j.at("mlp_only_layers"))
      if (v.is_number_integer()) dense_only.insert(v.get<int64_t>());
  for (int64_t i = 0; i < s.layers; ++i)
    s.moe_layer[static_cast<size_t>(i)] = !dense_only.count(i) && (i + 1) % step == 0;
}

void read_llama_like(const ConfigFields& f, const nlohmann::json& j, ConfigShape& s) {
  const std::string& t = s.architecture;
  s.layers = layer_count(f);
  s.hidden = f.count("hidden_size", "hidden width");
  s.vocab = f.count("vocab_size", "vocabulary");
  s.intermediate = f.count("intermediate_size", "MLP width");
  s.moe_layer.assign(static_cast<size_t>(s.layers), false);
  read_attention_heads(f, s);
  const bool gemma = t.rfind("gemma", 0) == 0;
  s.tied_embeddings = f.flag_or("tie_word_embeddings", gemma);
  s.qkv_bias = t == "qwen2" || t == "qwen2_moe" ? true : f.flag_or("attention_bias", false);
  s.output_bias = t == "qwen2" || t == "qwen2_moe" ? false : s.qkv_bias;
  s.mlp_bias = f.flag_or("mlp_bias", false);
  s.norms_per_layer = t == "gemma2" || t == "gemma3" || t == "gemma3_text" ? 4 : 2;
  s.qk_norm = t == "qwen3" || t == "qwen3_moe" || t == "gemma3" || t == "gemma3_text";
  if (t == "mixtral") {
    s.experts.routed = f.count("num_local_experts", "routed experts");
    s.experts.per_token = f.count("num_experts_per_tok", "experts per token");
    s.experts.width = s.intermediate;
    s.moe_layer.assign(static_cast<size_t>(s.layers), true);
  } else if (t == "qwen2_moe" || t == "qwen3_moe") {
    read_qwen_moe(f, j, s);
  } else if (t == "deepseek_v2" || t == "deepseek_v3") {
    read_deepseek(f, s);
  }
}

// GPT-NeoX (Pythia) and Falcon: LayerNorm, a plain GELU MLP, fused QKV.
void read_neox_falcon(const ConfigFields& f, ConfigShape& s) {
  const bool falcon = s.architecture == "falcon";
  s.layers = layer_count(f);
  s.hidden = f.count("hidden_size", "hidden width");
  s.vocab = f.count("vocab_size", "vocabulary");
  s.heads = f.count_either("num_attention_heads", "n_head", "query heads");
  if (s.hidden % s.heads != 0) throw Error(kExitInvalidModel, "config.json field 'hidden_size': not a multiple of the heads");
  s.head_dim = s.hidden / s.heads;
  s.moe_layer.assign(static_cast<size_t>(s.layers), false);
  s.gated_mlp = false;
  s.layer_norm = true;
  if (!falcon) {
    s.kv_heads = s.heads;
    s.intermediate = f.count("intermediate_size", "MLP width");
    s.qkv_bias = s.output_bias = f.flag_or("attention_bias", true);
    s.mlp_bias = true;
    s.tied_embeddings = f.flag_or("tie_word_embeddings", false);
    return;
  }
  const bool new_arch = f.flag_or("new_decoder_architecture", false);
  s.kv_heads = new_arch ? f.count_or("num_kv_heads", s.heads) : f.flag_or("multi_query", true) ? 1 : s.heads;
  s.intermediate = f.count_or("ffn_hidden_size", 4 * s.hidden);
  s.qkv_bias = s.output_bias = s.mlp_bias = f.flag_or("bias", false);
  s.tied_embeddings = f.flag_or("tie_word_embeddings", true);
  s.norms_per_layer = new_arch ? (f.count_or("num_ln_in_parallel_attn", 2) == 1 ? 1 : 2) : f.flag_or("parallel_attn", true) ? 1 : 2;
}

ConfigShape read_shape(const nlohmann::json& j) {
  ConfigShape s;
  s.architecture = model_type(j);
  const ConfigFields top(j), f(language_model(j));
  if (llama_like().count(s.architecture)) read_llama_like(f, language_model(j), s);
  else if (s.architecture == "gpt_neox" || s.architecture == "falcon") read_neox_falcon(f, s);
  else
    throw Error(kExitInvalidModel, fmt::format("config.json field 'model_type': '{}' is not a supported decoder ({})",
                                               s.architecture, kSupported));
  s.max_positions = f.count_or("max_position_embeddings", 0);
  if (llama_like().count(s.architecture)) read_sliding_window(f, language_model(j), s);
  s.weights_dtype = weights_dtype(f, top, s);
  read_quantization(top, s);
  if (s.experts.routed > 0 && s.experts.per_token > s.experts.routed)
    throw Error(kExitInvalidModel, "config.json field 'num_experts_per_tok': more than the routed experts");
  s.experts.moe_layers = std::count(s.moe_layer.begin(), s.moe_layer.end(), true);
  return s;
}

void describe(const ConfigShape& s, DecoderModel& m) {
  m.how.push_back(fmt::format("config.json: model_type '{}', {} layers, hidden {}, vocab {}, weights {}{}", s.architecture,
                              s.layers, s.hidden, s.vocab, s.weights_dtype, s.tied_embeddings ? ", tied embeddings" : ""));
  if (s.latent.present())
    m.how.push_back(fmt::format("multi-head latent attention: {} heads, queries {}{}, KV cache the latent of {} and a rotary "
                                "key of {} per token per layer", s.heads, s.latent.nope_head_dim + s.latent.rope_head_dim,
                                s.latent.q_lora_rank > 0 ? fmt::format(" through a rank-{} pair", s.latent.q_lora_rank) : "",
                                s.latent.kv_lora_rank, s.latent.rope_head_dim));
  if (s.experts.routed > 0)
    m.how.push_back(fmt::format("mixture of experts in {} of {} layers: {} routed experts of width {}, {} per token{}",
                                s.experts.moe_layers, s.layers, s.experts.routed, s.experts.width, s.experts.per_token,
                                s.experts.shared_width > 0 ? fmt::format(", shared experts of width {}", s.experts.shared_width) : ""));
  else
    m.how.push_back(fmt::format("MLP: {} of width {}", s.gated_mlp ? "gated" : "plain", s.intermediate));
  if (s.sliding_window > 0)
    m.how.push_back(fmt::format("sliding window: {} of {} layers attend to and cache the last {} positions", s.window_layers,
                                s.layers, s.sliding_window));
  m.how.insert(m.how.end(), s.how.begin(), s.how.end());
}

DecoderModel decoder_of(const ConfigShape& s) {
  DecoderModel m;
  m.source = "config.json";
  m.architecture = s.architecture;
  m.layers = s.layers;
  m.heads = s.heads;
  m.kv_heads = s.kv_heads;
  m.head_dim = s.head_dim;
  m.hidden = s.hidden;
  m.vocab = s.vocab;
  m.attention = s.latent.present() ? "MLA" : s.kv_heads == s.heads ? "MHA" : s.kv_heads == 1 ? "MQA" : "GQA";
  m.attention_form = "flash attention (config.json)";
  m.rotary = true;
  m.max_positions = s.max_positions;
  m.logits_every_position = false;  // serving runtimes take the last position's logits
  m.act_dtype = m.kv_dtype = s.weights_dtype == "fp8" ? "bf16" : s.weights_dtype;
  m.latent = s.latent;
  m.sliding_window = s.sliding_window;
  m.window_layers = s.window_layers;
  m.experts = s.experts;
  // The deployed step's MLP (the dense layers'; a MoE layer's experts are described apart).
  m.mlp_intermediate = s.intermediate;
  m.gated_mlp = s.gated_mlp;
  build_config_weights(s, m);
  describe(s, m);
  return m;
}

}  // namespace

DecoderModel decoder_from_config(const std::string& path) {
  return decoder_of(read_shape(*read_json_object(path, false)));
}

bool looks_like_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  return in && first == '{';
}

bool is_model_config(const std::string& path) {
  if (!looks_like_json(path)) return false;
  const std::optional<nlohmann::json> j = read_json_object(path, true);
  return j && (j->contains("model_type") || j->contains("architectures") || j->contains("text_config"));
}

std::string describe_model_config(const std::string& path) {
  std::string what = "a Hugging Face config.json";
  try {
    const DecoderModel m = decoder_from_config(path);
    const ParameterCount p = count_parameters(m);
    what += fmt::format(" ({}, {} layers, {:.2f}B parameters", m.architecture, m.layers, p.total / 1e9);
    what += m.experts.routed > 0 ? fmt::format(", {:.2f}B active per token)", p.active_per_token / 1e9) : ")";
  } catch (const Error& e) {
    what += std::string(" (") + e.what() + ")";
  }
  return what + ", not an ONNX model: plan serving it with `modelcost llm " + path + " --gpu NAME`";
}

}  // namespace modelcost
