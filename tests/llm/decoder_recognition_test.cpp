#include <gtest/gtest.h>

#include "llm/llm_test_support.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

class ExportTest : public ::testing::TestWithParam<std::string> {};

// Every export: the structure it was made from, KV bytes per token = 2 x layers x kv_heads x
// head_dim x bytes(kv dtype) exactly, and the weights as stored.
TEST_P(ExportTest, RecognisesTheConfigurationItWasMadeFrom) {
  const nlohmann::json e = llm_expected(GetParam());
  const Recognised r = recognise_file(llm_export(GetParam()));
  const DecoderModel& m = r.model;
  EXPECT_EQ(m.token_input, "input_ids");
  EXPECT_EQ(m.layers, e["layers"].get<int64_t>());
  EXPECT_EQ(m.heads, e["heads"].get<int64_t>());
  EXPECT_EQ(m.kv_heads, e["kv_heads"].get<int64_t>());
  EXPECT_EQ(m.head_dim, e["head_dim"].get<int64_t>());
  EXPECT_EQ(m.hidden, e["hidden"].get<int64_t>());
  EXPECT_EQ(m.vocab, e["vocab"].get<int64_t>());
  EXPECT_EQ(m.kv_cache.size(), 2 * static_cast<size_t>(m.layers));
  EXPECT_EQ(m.kv_cache.front().past, "past_key_values.0.key");
  EXPECT_EQ(m.kv_cache.front().present, "present.0.key");
  EXPECT_FALSE(m.decode_derived);
  EXPECT_EQ(m.rotary, !e["gpt"].get<bool>());
  const int64_t kv = e["kv_heads"], heads = e["heads"];
  EXPECT_EQ(m.attention, kv == heads ? "MHA" : (kv == 1 ? "MQA" : "GQA"));
  EXPECT_EQ(m.past_symbol, "past_sequence");
  EXPECT_EQ(m.fixed_sequence, e["decode_shaped"].get<bool>() ? 1 : 0);
  // The MLP the deployed decode step is built with: SiLU(gate) * up for the Llama exports, one up
  // projection for GPT's GELU MLP and the fused export's ReLU MLP.
  EXPECT_EQ(m.mlp_intermediate, e["inter"].get<int64_t>());
  EXPECT_EQ(m.gated_mlp, !e["gpt"].get<bool>() && GetParam() != "gqa_fused_kv");

  LlmOptions options;
  options.prompt = 16;
  options.generate = 8;
  const Device device = test_device();
  const double per_token = 2.0 * e["layers"].get<double>() * kv * e["head_dim"].get<double>();
  const LlmPlan fp32 = plan_llm(m, device, options);
  EXPECT_EQ(fp32.kv_dtype, "fp32");
  EXPECT_DOUBLE_EQ(fp32.kv_bytes_per_token, per_token * 4);
  EXPECT_DOUBLE_EQ(fp32.weights_bytes, e["stored_weight_bytes"].get<double>());
  options.precision.kv_cache = "fp8";
  EXPECT_DOUBLE_EQ(plan_llm(m, device, options).kv_bytes_per_token, per_token * 1);
  options.precision.kv_cache = "fp16";
  EXPECT_DOUBLE_EQ(plan_llm(m, device, options).kv_bytes_per_token, per_token * 2);
}

INSTANTIATE_TEST_SUITE_P(Exports, ExportTest,
                         ::testing::Values("llama_gqa_kv", "llama_gqa_decode", "llama_mqa_kv", "gpt_mha_kv", "llama_gqa_int4",
                                           "gqa_fused_kv"));

TEST(DecoderRecognition, FusedGroupQueryAttentionCarriesItsHeadsAndRotaryCache) {
  const Recognised r = recognise_file(llm_export("gqa_fused_kv"));
  EXPECT_EQ(r.model.attention_form, "GroupQueryAttention");
  EXPECT_EQ(r.model.max_positions, 64);  // rows of its cos cache
  EXPECT_EQ(r.model.gemms.size(), 2u * 6 + 1);
}

TEST(DecoderRecognition, Int4WeightsAreCountedAsStored) {
  const Recognised r = recognise_file(llm_export("llama_gqa_int4"));
  size_t nbits = 0;
  for (const WeightGemm& g : r.model.gemms)
    if (g.op_type == "MatMulNBits") {
      ++nbits;
      EXPECT_EQ(g.stored_dtype, "int4");
      // Packed 4-bit blocks of 32 (16 bytes), a float scale and a uint8 zero point per block pair.
      EXPECT_LT(g.stored_bytes, 0.7 * g.k * g.n);
      EXPECT_GT(g.stored_bytes, 0.5 * g.k * g.n);
    }
  EXPECT_EQ(nbits, 15u);  // 7 per layer and the LM head
}

TEST(DecoderRecognition, PastLengthZeroIsAPrefill) {
  RecognitionProbe probe;
  probe.past = 0;
  const Recognised r = recognise_file(llm_export("llama_gqa_kv"), probe);
  EXPECT_EQ(r.model.layers, 2);
  EXPECT_EQ(r.model.kv_heads, 2);
  EXPECT_EQ(r.model.head_dim, 16);
}

// A loaded (not yet shaped) graph's inputs carry only their declared types: the token input's
// sequence dim is found from them, so a prefill is shaped at its prompt, not left at 1.
TEST(DecoderRecognition, ProbeDimsSetTheTokenSequenceOfALoadedGraph) {
  RecognitionProbe probe;
  probe.sequence = 128;
  probe.past = 0;
  for (const char* name : {"llama_gqa_kv", "gpt_mha_kv", "llama_mqa_kv"}) {
    const Model model = load_model(llm_export(name));
    const auto dims = probe_dims(model, probe);
    ShapeOptions options;
    for (const auto& [dim, value] : dims) options.dims[dim] = value;
    const auto run = analyse_file(llm_export(name), options);
    const Recognised r = recognise_file(llm_export(name));
    const Graph& g = *run->analysis.graph;
    const TensorInfo& ids = g.tensors[static_cast<size_t>(g.find(r.model.token_input))];
    EXPECT_EQ(ids.shape, (Shape{1, 128})) << name;
  }
}

TEST(DecoderRecognition, TinyLlamaWithoutCacheDerivesTheDecodeStep) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  const Recognised r = recognise_file(shared_model("tinyllama_1b_op18.onnx"));
  const DecoderModel& m = r.model;
  EXPECT_EQ(m.layers, 22);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.attention, "GQA");
  EXPECT_TRUE(m.rotary);
  EXPECT_TRUE(m.kv_cache.empty());
  EXPECT_TRUE(m.decode_derived);
  EXPECT_EQ(m.fixed_batch, 1);
  EXPECT_EQ(m.gemms.size(), 22u * 7 + 1);
  EXPECT_EQ(m.mlp_intermediate, 5632);
  EXPECT_TRUE(m.gated_mlp);
  // The deployed view runs each GEMM and each attention block as at least one kernel.
  EXPECT_GE(m.deployed_kernels, 22.0 * 8 + 1);
  EXPECT_LT(m.deployed_kernels, 1619);  // fewer than the graph's nodes
  EXPECT_GT(m.elementwise_bytes_per_token, 0);
  // The README's 1100048421 float initializer elements, stored as fp32.
  EXPECT_DOUBLE_EQ(m.gemm_weight_bytes + m.other_weight_bytes, 1100048421.0 * 4);

  LlmOptions options;
  options.precision.kv_cache = "fp16";
  options.batches = {1, 8};  // beyond the file's batch 1: planned from per-token costs
  const LlmPlan plan = plan_llm(m, test_device(), options);
  EXPECT_DOUBLE_EQ(plan.kv_bytes_per_token, 2.0 * 22 * 4 * 64 * 2);
  ASSERT_EQ(plan.rows.size(), 2u);
  EXPECT_GT(plan.rows[1].tokens_per_s_per_device, plan.rows[0].tokens_per_s_per_device);
}

TEST(DecoderRecognition, Gpt2IsMultiHead) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  const Recognised r = recognise_file(shared_model("gpt2_op18.onnx"));
  EXPECT_EQ(r.model.layers, 12);
  EXPECT_EQ(r.model.heads, 12);
  EXPECT_EQ(r.model.kv_heads, 12);
  EXPECT_EQ(r.model.head_dim, 64);
  EXPECT_EQ(r.model.vocab, 50257);
  EXPECT_EQ(r.model.attention, "MHA");
  EXPECT_FALSE(r.model.rotary);
  EXPECT_EQ(r.model.max_positions, 1024);
}

TEST(DecoderRecognition, NonDecodersNameWhatIsMissing) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  try {
    recognise_file(shared_model("resnet18_op13.onnx"));
    FAIL() << "resnet18 recognised as a decoder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("not a decoder LLM: no token input"), std::string::npos) << e.what();
  }
  try {
    recognise_file(shared_model("bert_base_op17.onnx"));
    FAIL() << "bert recognised as a decoder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no LM head"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace modelcost::testing
