// The deployed step's prefill and mixed iterations (src/llm/deployed_step.cpp): the TTFT as the
// prefill the CUDA module runs, chunked prefill, kernel counts, and a step mixing chunks with decodes.
#include <gtest/gtest.h>

#include "llm/llm_test_support.h"
#include "llm/step_model.h"
#include "llm_decoders.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

// Achievable figures, the step's row and decode curves, and the per-node report's gemm and
// attention curves (the prefill's products and attention take these).
Device prefill_device() {
  Device d = test_device();
  d.compute_units = 100;
  d.achievable.memory_bandwidth_gbps = 1000;
  d.achievable.tensor_tflops["fp16"] = 500;
  d.achievable.kernel_overhead_us = 2;
  d.achievable.kernel_gap_us = 1;
  d.achievable.kernel_curves["decode_gemm_m1"] = {3, 0, 0, 500};
  d.achievable.kernel_curves["decode_gemm_m32"] = {5, 0, 0, 250};
  d.achievable.kernel_curves["decode_attention"] = {6, 0, 0, 800};
  d.achievable.kernel_curves["decode_rowwise"] = {2, 0, 0, 1000};
  d.achievable.kernel_curves["gemm"] = {4, 1, 400, 900};
  d.achievable.kernel_curves["attention"] = {5, 10, 100, 900};
  return d;
}

LlmOptions prefill_options(int64_t prompt, int64_t chunk = 0) {
  LlmOptions o;
  o.prompt = prompt;
  o.generate = 4;
  o.prefill_chunk = chunk;
  o.workspace_bytes = 0;
  o.precision = {"fp16", "fp16", "fp16"};
  return o;
}

TEST(DeployedStep, TtftIsThePrefillTheRuntimeRuns) {
  const DecoderModel m = llama_model();
  const Device d = prefill_device();
  const LlmPlan plan = plan_llm(m, d, prefill_options(300));
  const StepSetup s = make_step_setup(m, d, prefill_options(300));
  const StepTime step = predict_deployed_step(s, StepMix::uniform(0, 0, 1, 300, 0));
  EXPECT_DOUBLE_EQ(plan.rows[0].ttft_ms, step.total_ms());
  // Nine kernels per layer (one attention kernel), then the last positions, the norm and the LM head.
  EXPECT_DOUBLE_EQ(step.kernels, static_cast<double>(deployed_step_kernels(m, {false, true, 1, 1})));
  EXPECT_EQ(deployed_step_kernels(m, {false, true, 1, 1}), 9 * 2 + 4);
  // 300 rows: each product on the gemm curve (K loop, then the larger of its math and its traffic,
  // never under the tile model), plus the kernel gap.
  const KernelRoleTime* qkv = nullptr;
  for (const KernelRoleTime& r : step.by_role)
    if (r.role == "QKV product") qkv = &r;
  ASSERT_NE(qkv, nullptr);
  const double flops = 2.0 * 300 * 256 * 512, bytes = 256.0 * 512 * 2 + 300.0 * (256 + 512) * 2;
  const double curve_us = 4 + 1 * 256 / 1000.0 + std::max(flops / 400e6, bytes / 900e3) + 1;
  EXPECT_GE(qkv->ms, 2 * curve_us * 1e-3 - 1e-12);  // two layers
  EXPECT_LT(qkv->ms, 2 * curve_us * 1e-3 * 3);
}

TEST(DeployedStep, ChunkedPrefillAddsItsChunksEachAfterTheOnesBefore) {
  const DecoderModel m = llama_model();
  const Device d = prefill_device();
  const StepSetup s = make_step_setup(m, d, prefill_options(1000, 256));
  const LlmPlan plan = plan_llm(m, d, prefill_options(1000, 256));
  double expected = 0;
  for (int64_t past = 0; past < 1000; past += 256)
    expected += predict_deployed_step(s, StepMix::uniform(0, 0, 1, std::min<int64_t>(256, 1000 - past), past)).total_ms();
  EXPECT_NEAR(plan.rows[0].ttft_ms, expected, expected * 1e-12);
  EXPECT_DOUBLE_EQ(plan.rows[0].prefill.kernels, 4.0 * deployed_step_kernels(m, {false, true, 1, 1}));
  // Chunks cost more than one step: each pays its kernels and reads the weights again.
  EXPECT_GT(plan.rows[0].ttft_ms, plan_llm(m, d, prefill_options(1000)).rows[0].ttft_ms);
  // Past 256 chunks, 256 of them are priced and stand for the rest: close to the sum of all.
  const LlmPlan many = plan_llm(m, d, prefill_options(3000, 5));
  double all = 0;
  for (int64_t past = 0; past < 3000; past += 5) all += predict_deployed_step(s, StepMix::uniform(0, 0, 1, 5, past)).total_ms();
  EXPECT_NEAR(many.rows[0].ttft_ms, all, all * 1e-3);
}

TEST(DeployedStep, AMixedIterationRunsBothAttentionsBesideOneSetOfProducts) {
  const DecoderModel m = llama_model();
  const Device d = prefill_device();
  const StepSetup s = make_step_setup(m, d, prefill_options(128));
  const StepTime mixed = predict_deployed_step(s, StepMix::uniform(16, 500, 1, 256, 128));
  const StepTime prefill = predict_deployed_step(s, StepMix::uniform(0, 0, 1, 256, 128));
  const StepTime decode = predict_deployed_step(s, StepMix::uniform(16, 500, 0, 0, 0));
  EXPECT_DOUBLE_EQ(mixed.kernels, static_cast<double>(deployed_step_kernels(m, {true, true, 1, 1})));
  EXPECT_EQ(deployed_step_kernels(m, {true, true, 1, 1}), 12 * 2 + 4);
  // Its attention is the two steps' attention; its products read the weights once for all rows.
  EXPECT_NEAR(mixed.attention_ms, prefill.attention_ms + decode.attention_ms, 1e-12);
  EXPECT_LT(mixed.total_ms(), prefill.total_ms() + decode.total_ms());
  // Sequences summed one by one are the uniform mix.
  StepMix added;
  for (int i = 0; i < 16; ++i) added.add_decode(500);
  added.add_prefill(256, 128);
  EXPECT_NEAR(predict_deployed_step(s, added).total_ms(), mixed.total_ms(), 1e-12);
  EXPECT_DOUBLE_EQ(added.prefill_pairs, 256.0 * 128 + 256.0 * 257 / 2);
}

TEST(DeployedStep, AttentionBetweenComputeBoundProductsTakesTheLoadScale) {
  const DecoderModel m = llama_model();
  Device d = prefill_device();
  d.achievable.kernel_curves["gemm"] = {4, 1, 10, 900};  // products compute-bound from a few dozen rows
  Device loaded = d;
  loaded.achievable.attention_load_scale = 1.5;
  const auto attention_ms = [&](const Device& device, const StepMix& mix) {
    const StepSetup s = make_step_setup(m, device, prefill_options(2048));
    for (const KernelRoleTime& r : predict_deployed_step(s, mix).by_role)
      if (r.role == "prefill attention") return r.ms;
    return 0.0;
  };
  // A long prompt's products are compute-bound: the attention's work (not its fixed cost, its K
  // loop and the gap: 5 + 10 x 2048 / 1000 + 1 us per layer) takes 1.5 times as long.
  const StepMix prompt = StepMix::uniform(0, 0, 1, 2048, 0);
  const double base = attention_ms(d, prompt), fixed_ms = 2 * (5 + 10 * 2048 / 1000.0 + 1) * 1e-3;
  ASSERT_GT(base, fixed_ms);
  EXPECT_NEAR(attention_ms(loaded, prompt) - base, 0.5 * (base - fixed_ms), 1e-9);
  // A short chunk's products (16 rows, the skinny kernel's) are not compute-bound: no load.
  const StepMix chunk = StepMix::uniform(0, 0, 1, 16, 0);
  EXPECT_DOUBLE_EQ(attention_ms(loaded, chunk), attention_ms(d, chunk));
  // Without the figure the attention takes its curve alone.
  EXPECT_DOUBLE_EQ(attention_ms(d, prompt), base);
}

TEST(DeployedStep, IterationsOfThePlanArePricedAsTheirMix) {
  const DecoderModel m = llama_model();
  const Device d = prefill_device();
  LlmOptions o = prefill_options(128);
  o.iterations = {parse_iteration_mix("2x64@32+8@900"), parse_iteration_mix("4@100")};
  const LlmPlan plan = plan_llm(m, d, o);
  const StepSetup s = make_step_setup(m, d, o);
  ASSERT_EQ(plan.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(plan.iterations[0].step.total_ms(), predict_deployed_step(s, StepMix::uniform(8, 900, 2, 64, 32)).total_ms());
  EXPECT_DOUBLE_EQ(plan.iterations[1].step.total_ms(), predict_deployed_decode(s, 4, 100).total_ms());
  // A graph without the MLP has no deployed step to price.
  DecoderModel bare = m;
  bare.mlp_intermediate = 0;
  EXPECT_THROW(plan_llm(bare, d, o), Error);
}

}  // namespace
}  // namespace modelcost::testing
