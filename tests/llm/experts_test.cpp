// Mixtures of experts and latent attention in the plan (docs/llm.md, "Mixture of experts"): the
// experts a batch touches, the weights a decode step reads, expert parallelism and MLA's cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "llm/llm_test_support.h"
#include "llm/step_model.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

DecoderModel config(const std::string& name) {
  return decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + name + ".json");
}

LlmOptions options_for(std::vector<int64_t> batches, int64_t context) {
  LlmOptions o;
  o.prompt = 64;
  o.generate = 64;
  o.batches = std::move(batches);
  o.contexts = {context};
  o.workspace_bytes = 0;
  return o;
}

Device linked_device() {
  Device d = test_device(1e6);  // room for any model: the tests are about time and bytes
  d.interconnect["nvlink_gbps"] = 100;
  d.interconnect["nvlink_latency_us"] = 1;
  return d;
}

// Weight bytes of the GEMMs a token runs (the routed experts at top-k), at the stored precision.
double active_gemm_bytes(const DecoderModel& m, double experts_read_per_layer) {
  double bytes = 0;
  for (const WeightGemm& g : m.gemms)
    bytes += g.routed() ? g.stored_bytes / static_cast<double>(g.experts) * experts_read_per_layer : g.stored_bytes;
  return bytes;
}

TEST(Experts, DistinctExpertsTouchedByABatch) {
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 1), 2);
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 2), 8 * (1 - 0.75 * 0.75));
  EXPECT_NEAR(expected_experts_touched(64, 6, 8), 64 * (1 - std::pow(58.0 / 64, 8)), 1e-12);
  EXPECT_NEAR(expected_experts_touched(256, 8, 4096), 256, 1e-9);  // a prefill reads them all
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 8, 3), 8);
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 0), 0);
}

TEST(Experts, ADecodeStepReadsTheExpertsItsTokensAreRoutedTo) {
  const DecoderModel m = config("mixtral-8x7b");
  const Device d = test_device(1e6);
  const LlmPlan plan = plan_llm(m, d, options_for({1, 4, 256}, 128));
  for (const LlmBatchRow& r : plan.rows) {
    const double touched = expected_experts_touched(8, 2, static_cast<double>(r.batch));
    const double weights_ms = active_gemm_bytes(m, touched) / d.bandwidth_bytes_per_s() * 1e3;
    // Memory-bound at these batches: the GEMMs take the weights read plus the activations (5% at batch 256).
    EXPECT_GT(r.contexts[0].decode.gemm_ms, weights_ms) << "batch " << r.batch;
    EXPECT_LT(r.contexts[0].decode.gemm_ms, weights_ms * 1.05) << "batch " << r.batch;
  }
  // Batch 1 reads 2 of 8 experts, batch 256 all of them.
  EXPECT_LT(plan.rows[0].contexts[0].decode.gemm_ms * 2, plan.rows[2].contexts[0].decode.gemm_ms);
  EXPECT_NE(plan.notes.back().find("E (1 - (1 - k/E)^tokens)"), std::string::npos) << plan.notes.back();
}

TEST(Experts, ExpertParallelismSpreadsTheExpertsAndPaysAnAllToAll) {
  const DecoderModel m = config("mixtral-8x7b");
  const Device d = linked_device();
  LlmOptions o = options_for({8}, 128);
  const LlmPlan one = plan_llm(m, d, o);
  o.expert_parallel = 4;
  const LlmPlan four = plan_llm(m, d, o);
  EXPECT_EQ(four.devices, 4);
  double routed = 0;
  for (const WeightGemm& g : m.gemms) routed += g.routed() ? g.stored_bytes : 0;
  // Each device holds 2 of the 8 experts and a whole copy of everything else.
  EXPECT_NEAR(four.rows[0].memory.weights_bytes, one.weights_bytes - routed * 3 / 4, 1);
  // Dispatch and combine in each of the 32 MoE layers: each device sends 8 / 4 tokens x 2
  // experts x 4096 x 2 bytes, 3/4 of it to other devices, over 3 steps of latency.
  const double sent = 8.0 / 4 * 2 * 4096 * 2 * 3 / 4;
  const double expected_ms = 32 * 2 * (3 * 1e-6 + sent / 100e9) * 1e3;
  EXPECT_NEAR(four.rows[0].contexts[0].decode.communication_ms, expected_ms, expected_ms * 1e-9);
  // Per device: the group's tokens over its 4 devices.
  EXPECT_NEAR(four.rows[0].tokens_per_s_per_device, four.rows[0].tokens_per_s_per_sequence * 8 / 4, 1e-9);
}

TEST(Experts, ExpertParallelismNeedsExpertsAndAMultipleOfTensorParallelism) {
  const Device d = linked_device();
  LlmOptions o = options_for({1}, 128);
  o.expert_parallel = 2;
  EXPECT_THROW(plan_llm(config("llama-3-8b"), d, o), Error);  // no experts
  o.expert_parallel = 3;
  EXPECT_THROW(plan_llm(config("mixtral-8x7b"), d, o), Error);  // does not divide 8 experts
  o.expert_parallel = 2;
  o.tensor_parallel = 4;
  EXPECT_THROW(plan_llm(config("mixtral-8x7b"), d, o), Error);  // not a multiple of --tp
  o.expert_parallel = 8;
  o.tensor_parallel = 4;
  EXPECT_EQ(plan_llm(config("mixtral-8x7b"), d, o).devices, 8);
}

TEST(Experts, LatentAttentionReadsTheCompressedCacheOncePerToken) {
  const DecoderModel m = config("deepseek-v2-lite");
  const Device d = test_device(1e6);
  const LlmPlan plan = plan_llm(m, d, options_for({4}, 1000));
  const LlmPlan longer = plan_llm(m, d, options_for({4}, 3000));
  // 2000 more tokens of context for 4 sequences: the latent and rotary key of 27 layers, once.
  const double expected_ms = 4 * 2000 * 27 * (512 + 64) * 2 / d.bandwidth_bytes_per_s() * 1e3;
  const double grown = longer.rows[0].contexts[0].decode.attention_ms - plan.rows[0].contexts[0].decode.attention_ms;
  EXPECT_NEAR(grown, expected_ms, expected_ms * 1e-9);
}

// A MoE layer in the deployed decode step: router, routing, the routed experts' products over the
// experts the batch touches, their combine, and the shared expert.
TEST(Experts, AMixtureDecodesAsTheDeployedStepWithItsExpertKernels) {
  const DecoderModel m = config("qwen1.5-moe-a2.7b");
  const Device d = test_device(1e6);  // no kernel overhead: each kernel is its bytes over the bandwidth
  const LlmPlan plan = plan_llm(m, d, options_for({1, 16}, 128));
  // Per layer: the dense step's 10, the router, two routing kernels (top-k, sort) and the combine
  // beside the experts' three, and the shared expert's three.
  EXPECT_EQ(plan.rows[0].contexts[0].decode.kernels, 24 * (10 + 4 + 3) + 3);
  EXPECT_EQ(deployed_decode_kernels(m, 1), 24 * (10 + 4 + 3) + 3);
  for (const LlmBatchRow& r : plan.rows) {
    const double b = static_cast<double>(r.batch), touched = expected_experts_touched(60, 4, b);
    // 24 layers x (the touched experts' gate/up weights + each token-expert pair's rows), bf16.
    const double bytes = 24 * (touched * 2048.0 * 2 * 1408 * 2 + b * 4 * (2048 + 2 * 1408) * 2);
    double ms = -1;
    for (const KernelRoleTime& role : r.contexts[0].decode.by_role)
      if (role.role == "expert gate/up product") ms = role.ms;
    EXPECT_NEAR(ms, bytes / d.bandwidth_bytes_per_s() * 1e3, 1e-9) << "batch " << r.batch;
  }
  std::vector<std::string> roles;
  for (const KernelRoleTime& role : plan.rows[0].contexts[0].decode.by_role) roles.push_back(role.role);
  for (const char* role : {"router product", "routing", "expert down product", "expert combine", "shared gate/up product"})
    EXPECT_NE(std::find(roles.begin(), roles.end(), role), roles.end()) << role;
}

// The grouped product's own curve, over whole waves of blocks: a prefill of 100 tokens routes 200
// pairs to the 8 experts, 25 each, run in tiles of 64 rows; 8 tiles x 112 blocks of 256 of the
// 28672 gate/up columns fill 9 waves of 100 multiprocessors.
TEST(Experts, TheGroupedExpertProductTakesItsCurveOverWholeWaves) {
  const DecoderModel m = config("mixtral-8x7b");
  Device d = test_device(1e6);
  d.compute_units = 100;
  d.achievable.kernel_curves["expert_gemm"] = {7, 2, 300, 2000};
  LlmOptions o = options_for({1}, 128);
  o.precision = {"fp16", "fp16", "fp16"};
  const StepTime step = predict_deployed_step(make_step_setup(m, d, o), StepMix::uniform(0, 0, 1, 100, 0));
  const double touched = expected_experts_touched(8, 2, 100), h = 4096, width = 14336;
  EXPECT_EQ(expert_tile_rows(200 / touched), 64);
  const double flops = 9 * 100 * (2 * 64 * 256 * h), bytes = touched * h * 2 * width * 2 + 200 * (h + 2 * width) * 2;
  const double us = 7 + 2 * h / 1000 + std::max(flops / 300e6, bytes / 2000e3);
  double ms = -1;
  for (const KernelRoleTime& role : step.by_role)
    if (role.role == "expert gate/up product") ms = role.ms;
  EXPECT_NEAR(ms, 32 * us * 1e-3, 1e-9);
}

TEST(Experts, ADenseConfigDecodesAsTheDeployedStep) {
  const LlmPlan plan = plan_llm(config("qwen2-0.5b"), test_device(80), options_for({1}, 128));
  EXPECT_EQ(plan.rows[0].contexts[0].decode.kernels, deployed_decode_kernels(plan.model, 1));
  EXPECT_EQ(plan.rows[0].contexts[0].decode.kernels, 10 * 24 + 3);
}

}  // namespace
}  // namespace modelcost::testing
