// Hugging Face config.json files of public models (tests/models/llm/configs, written from the
// published config.json of each model) read into decoders: parameter counts exact against the
// published figures, weight bytes, KV bytes per token, and errors naming the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "llm/llm_test_support.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

std::string config_path(const std::string& name) {
  return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + name + ".json";
}

DecoderModel config(const std::string& name) { return decoder_from_config(config_path(name)); }

// A file of `text`, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/modelcost-config-XXXXXX";
    const int fd = mkstemp(pattern);
    if (fd >= 0) close(fd);
    path_ = pattern;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct PublishedCount {
  const char* config;
  int64_t parameters;
  const char* where;  // where the published figure comes from
};

// Every count is also the sum of the layer shapes of the config (checked by hand in the comments
// of config_gemms.cpp's families); the figure on the right is the one the model's publisher gives.
const PublishedCount kPublished[] = {
    {"llama-3-8b", 8'030'261'248, "model card: 8.03B; safetensors index total_size 16,060,522,496 bytes at bf16"},
    {"llama-3-70b", 70'553'706'496, "model card: 70.6B"},
    {"llama-3.1-405b", 405'853'388'800, "model card: 405B (the sum of its layer shapes: 405.85B)"},
    {"llama-2-7b", 6'738'415'616, "model card: 6.74B (Llama 2 paper, 7B)"},
    {"mistral-7b", 7'241'732'096, "model card: 7.24B"},
    {"qwen2-0.5b", 494'032'768, "model card: 0.49B (494,032,768 with the tied embedding stored once)"},
    {"qwen2.5-7b", 7'615'616'512, "model card: 7.61B"},
    {"qwen3-8b", 8'190'735'360, "model card: 8.19B"},
    {"gemma-2-9b", 9'241'705'984, "model card: 9.24B"},
    {"phi-3-mini-4k", 3'821'079'552, "model card: 3.8B (3.82B)"},
    {"mixtral-8x7b", 46'702'792'704, "model card: 46.7B total"},
    {"qwen1.5-moe-a2.7b", 14'315'784'192, "model card: 14.3B total"},
    {"deepseek-v2-lite", 15'706'484'224, "model card: 15.7B total"},
    {"deepseek-v3", 671'026'419'200, "model card and paper: 671B total (the 14B multi-token-prediction module apart)"},
    {"gemma-3-1b", 999'885'952, "model card: 1B; 999,885,952 with the tied embedding stored once"},
    {"qwen3-30b-a3b", 30'532'122'624, "model card: 30.5B total"},
    {"pythia-160m", 162'322'944, "Pythia paper, table 1: 162,322,944"},
    {"falcon-7b", 6'921'720'704, "model card: 7B; the layer shapes of falcon-7b"},
};

TEST(ModelConfig, ParameterCountsMatchThePublishedFigures) {
  for (const PublishedCount& p : kPublished) {
    const ParameterCount count = count_parameters(config(p.config));
    EXPECT_EQ(static_cast<int64_t>(count.total), p.parameters) << p.config << " (" << p.where << ")";
  }
}

TEST(ModelConfig, ActiveParametersPerTokenOfTheMixtures) {
  // Mixtral: 2 of 8 experts; "12.9B active" on the model card.
  EXPECT_EQ(static_cast<int64_t>(count_parameters(config("mixtral-8x7b")).active_per_token), 12'879'925'248);
  // Qwen1.5-MoE-A2.7B: 4 of 60 experts and the shared expert; "2.7B activated".
  EXPECT_EQ(static_cast<int64_t>(count_parameters(config("qwen1.5-moe-a2.7b")).active_per_token), 2'689'173'504);
  // DeepSeek-V2-Lite: 6 of 64 experts and 2 shared; "2.4B activated" counts no input embedding
  // table (102400 x 2048 = 209,715,200): 2,451,435,008 + 209,715,200.
  EXPECT_EQ(static_cast<int64_t>(count_parameters(config("deepseek-v2-lite")).active_per_token), 2'661'150'208);
  // DeepSeek-V3: 8 of 256 and 1 shared; "37B activated".
  EXPECT_EQ(static_cast<int64_t>(count_parameters(config("deepseek-v3")).active_per_token), 37'552'297'472);
  // Qwen3-30B-A3B: 8 of 128 experts, no shared expert; "3.3B activated".
  EXPECT_EQ(static_cast<int64_t>(count_parameters(config("qwen3-30b-a3b")).active_per_token), 3'353'032'704);
    // A dense model uses every parameter.
  const ParameterCount dense = count_parameters(config("llama-3-8b"));
  EXPECT_EQ(dense.active_per_token, dense.total);
}

TEST(ModelConfig, WeightBytesAtTheConfigsPrecision) {
  const DecoderModel llama = config("llama-3-8b");  // bf16
  EXPECT_EQ(llama.gemm_weight_bytes + llama.other_weight_bytes, 16'060'522'496.0);
  const DecoderModel gemma = config("gemma-2-9b");  // published in float32
  EXPECT_EQ(gemma.gemm_weight_bytes + gemma.other_weight_bytes, 9'241'705'984.0 * 4);
  const DecoderModel qwen = config("qwen2-0.5b");  // tied: the table is stored once, as the LM head's weight
  EXPECT_EQ(qwen.gemm_weight_bytes + qwen.other_weight_bytes, 494'032'768.0 * 2);
  EXPECT_EQ(qwen.gemms.back().k * qwen.gemms.back().n, 151936 * 896);
  // DeepSeek-V3 stores its layers' GEMMs in fp8 with an fp32 scale per 128 x 128 block; the
  // embeddings, the router, the norms and the LM head in bf16.
  const DecoderModel v3 = config("deepseek-v3");
  double fp8 = 0, bf16 = 0;
  for (const WeightGemm& g : v3.gemms) (g.stored_dtype == "fp8" ? fp8 : bf16) += double(g.k) * double(g.n) * double(g.experts);
  EXPECT_EQ(v3.gemms.back().stored_dtype, "bf16");
  EXPECT_GT(v3.gemm_weight_bytes, fp8 + 2 * bf16);
  EXPECT_LT(v3.gemm_weight_bytes, fp8 * (1 + 4.0 / (128 * 128)) + 2 * bf16 + 1e6);
}

TEST(ModelConfig, KvBytesPerTokenOrdinaryAndLatent) {
  const Device d = test_device(1e6);
  LlmOptions o;
  o.prompt = 16;
  o.generate = 16;
  // Llama-3-8B: 2 x 32 layers x 8 kv heads x 128 x 2 bytes.
  EXPECT_EQ(plan_llm(config("llama-3-8b"), d, o).kv_bytes_per_token, 2.0 * 32 * 8 * 128 * 2);
  // MLA caches the latent (512) and the rotary key (64) per layer: DeepSeek-V2-Lite 27 layers, V3 61.
  EXPECT_EQ(plan_llm(config("deepseek-v2-lite"), d, o).kv_bytes_per_token, 27.0 * (512 + 64) * 2);
  EXPECT_EQ(plan_llm(config("deepseek-v3"), d, o).kv_bytes_per_token, 61.0 * (512 + 64) * 2);
  // Falcon-7B is multi-query: one kv head of 64.
  const DecoderModel falcon = config("falcon-7b");
  EXPECT_EQ(falcon.attention, "MQA");
  EXPECT_EQ(plan_llm(falcon, d, o).kv_bytes_per_token, 2.0 * 32 * 1 * 64 * 2);
}

// Sliding-window layers cache only their window: Gemma 2 every other layer (4096), Gemma 3 five
// layers in six (512 for the 1B), Mistral-7B v0.1 every layer (4096).
TEST(ModelConfig, SlidingWindowLayersCacheTheirWindow) {
  const Device d = test_device(1e6);
  LlmOptions o;
  o.prompt = 8000;
  o.generate = 192;
  const LlmPlan gemma2 = plan_llm(config("gemma-2-9b"), d, o);
  EXPECT_EQ(gemma2.model.window_layers, 21);
  EXPECT_EQ(gemma2.kv_bytes_per_token, 2.0 * 42 * 8 * 256 * 4);
  EXPECT_EQ(gemma2.kv_bytes_full_context, gemma2.kv_bytes_per_token / 42 * (21 * 8192 + 21 * 4096));
  const LlmPlan gemma3 = plan_llm(config("gemma-3-1b"), d, o);
  EXPECT_EQ(gemma3.model.window_layers, 22);  // layers 5, 11, 17 and 23 are global
  EXPECT_EQ(gemma3.kv_bytes_full_context, 2.0 * 1 * 256 * 2 * (4 * 8192 + 22 * 512));
  const LlmPlan mistral = plan_llm(config("mistral-7b"), d, o);
  EXPECT_EQ(mistral.kv_bytes_full_context, mistral.kv_bytes_per_token * 4096);
  EXPECT_EQ(config("llama-3-8b").sliding_window, 0);
  EXPECT_EQ(config("qwen2-0.5b").sliding_window, 0);  // use_sliding_window false
  // Past the window a decode step's attention reads more only in the global layers.
  o.prompt = 16;
  o.generate = 16;
  o.batches = {1};
  o.contexts = {5000, 7000, 8000};
  const LlmPlan steps = plan_llm(config("mistral-7b"), d, o);
  EXPECT_DOUBLE_EQ(steps.rows[0].contexts[0].decode.attention_ms, steps.rows[0].contexts[2].decode.attention_ms);
  // A prefill of 16384 tokens in 4096-position windows: each position attends to at most 4096.
  const Device compute_bound = make_custom_device(1, 1e9, 1e6, 0);  // 1 TFLOP/s: attention time is its FLOPs
  o.prompt = 16384;
  o.contexts = {};
  const double pairs = 4096.0 * 4097 / 2 + (16384.0 - 4096) * 4096;
  const double flops = 32 * 4 * 32 * 128 * pairs;  // layers x 4 x heads x head_dim x pairs
  EXPECT_NEAR(plan_llm(config("mistral-7b"), compute_bound, o).rows[0].prefill.attention_ms, flops / 1e12 * 1e3, 1e-6);
}

TEST(ModelConfig, StructureOfTheMixtures) {
  const DecoderModel v2 = config("deepseek-v2-lite");
  EXPECT_EQ(v2.attention, "MLA");
  EXPECT_EQ(v2.experts.routed, 64);
  EXPECT_EQ(v2.experts.per_token, 6);
  EXPECT_EQ(v2.experts.shared_width, 2 * 1408);
  EXPECT_EQ(v2.experts.moe_layers, 26);  // the first layer is dense
  EXPECT_EQ(v2.mlp_intermediate, 10944);  // the dense first layer's, as the deployed step runs it
  const DecoderModel qwen = config("qwen1.5-moe-a2.7b");
  EXPECT_EQ(qwen.experts.moe_layers, 24);
  EXPECT_EQ(qwen.experts.shared_width, 5632);
  const DecoderModel llama = config("llama-3-8b");
  EXPECT_EQ(llama.mlp_intermediate, 14336);  // the deployed decode step's description, as a graph gives it
  EXPECT_TRUE(llama.gated_mlp);
  EXPECT_EQ(llama.attention, "GQA");
  EXPECT_EQ(llama.gemms.size(), 32u * 6 + 1);  // q, k, v, o, gate/up, down per layer; the LM head
  EXPECT_FALSE(llama.logits_every_position);
}

// Multimodal Gemma 3 describes its language model in text_config: that is what is planned.
TEST(ModelConfig, TextConfigOfAMultimodalConfig) {
  std::ifstream in(config_path("gemma-3-1b"));
  nlohmann::json text = nlohmann::json::parse(in);
  const nlohmann::json wrapper = {{"model_type", "gemma3"}, {"architectures", {"Gemma3ForConditionalGeneration"}},
                                  {"torch_dtype", "bfloat16"}, {"text_config", text}, {"vision_config", {{"hidden_size", 1152}}}};
  TempFile file(wrapper.dump());
  EXPECT_TRUE(is_model_config(file.path()));
  EXPECT_EQ(static_cast<int64_t>(count_parameters(decoder_from_config(file.path())).total), 999'885'952);
}

TEST(ModelConfig, BadFilesAreOneLineErrorsNamingTheField) {
  TempFile missing_heads("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                         "\"vocab_size\": 10, \"intermediate_size\": 128}");
  try {
    decoder_from_config(missing_heads.path());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("'num_attention_heads'"), std::string::npos) << e.what();
  }
  TempFile unknown("{\"model_type\": \"bert\"}");
  EXPECT_THROW(decoder_from_config(unknown.path()), Error);
  TempFile negative("{\"model_type\": \"llama\", \"num_hidden_layers\": -2}");
  try {
    decoder_from_config(negative.path());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'num_hidden_layers'"), std::string::npos) << e.what();
  }
  // Hostile JSON: nested far deeper than a config, a value too large, too many layers.
  TempFile deep("{\"model_type\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_THROW(decoder_from_config(deep.path()), Error);
  EXPECT_FALSE(is_model_config(deep.path()));
  TempFile huge("{\"model_type\": \"llama\", \"num_hidden_layers\": 1e300}");
  EXPECT_THROW(decoder_from_config(huge.path()), Error);
  TempFile layers("{\"model_type\": \"llama\", \"num_hidden_layers\": 1000000000}");
  EXPECT_THROW(decoder_from_config(layers.path()), Error);
  TempFile text("not json");
  EXPECT_THROW(decoder_from_config(text.path()), Error);
  EXPECT_FALSE(is_model_config(text.path()));
  EXPECT_FALSE(is_model_config(std::string(MODELCOST_SOURCE_DIR) + "/samples/resnet50.onnx"));
  EXPECT_TRUE(is_model_config(config_path("mixtral-8x7b")));
}

}  // namespace
}  // namespace modelcost::testing
