#include <gtest/gtest.h>

#include <cmath>

#include "llm/llm_test_support.h"
#include "llm_decoders.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

LlmOptions options_for(std::vector<int64_t> batches, std::vector<int64_t> contexts = {}) {
  LlmOptions o;
  o.prompt = 128;
  o.generate = 64;
  o.batches = std::move(batches);
  o.contexts = std::move(contexts);
  o.workspace_bytes = 0;
  return o;
}

TEST(LlmPlan, DecodeAtBatchOneReadsTheWeightsOnce) {
  const DecoderModel m = hand_model();
  const Device d = test_device();
  const LlmPlan plan = plan_llm(m, d, options_for({1}, {1}));
  const double weights_ms = m.gemm_weight_bytes / d.bandwidth_bytes_per_s() * 1e3;
  EXPECT_DOUBLE_EQ(plan.weights_bytes, m.gemm_weight_bytes);
  EXPECT_GT(plan.rows[0].contexts[0].decode.gemm_ms, weights_ms);
  EXPECT_LT(plan.rows[0].contexts[0].decode.gemm_ms, weights_ms * 1.01);
}

TEST(LlmPlan, EachTokenOfContextAddsItsKvBytesToTheStep) {
  const DecoderModel m = hand_model();
  const Device d = test_device();
  const LlmPlan plan = plan_llm(m, d, options_for({4}, {1000, 3000}));
  const auto& c = plan.rows[0].contexts;
  EXPECT_DOUBLE_EQ(plan.kv_bytes_per_token, 2.0 * 4 * 2 * 128 * 2);
  const double expected_ms = 4 * 2000 * plan.kv_bytes_per_token / d.bandwidth_bytes_per_s() * 1e3;
  EXPECT_NEAR(c[1].decode.attention_ms - c[0].decode.attention_ms, expected_ms, expected_ms * 1e-9);
  EXPECT_DOUBLE_EQ(c[1].kv_bytes, 4 * 3000 * plan.kv_bytes_per_token);
}

TEST(LlmPlan, ThroughputGrowsWithBatchWhileDecodeIsMemoryBound) {
  const LlmPlan plan = plan_llm(hand_model(), test_device(), options_for({1, 8, 32}));
  EXPECT_LT(plan.rows[0].tokens_per_s_per_device, plan.rows[1].tokens_per_s_per_device);
  EXPECT_LT(plan.rows[1].tokens_per_s_per_device, plan.rows[2].tokens_per_s_per_device);
  EXPECT_GT(plan.rows[2].ttft_ms, plan.rows[0].ttft_ms);
  EXPECT_GT(plan.rows[0].mean_tpot_ms, 0);
}

TEST(LlmPlan, MostConcurrentSequencesFitAndOneMoreDoesNot) {
  const DecoderModel m = hand_model();
  const Device d = test_device(1);  // 1 GB
  const LlmPlan plan = plan_llm(m, d, options_for({1}));
  ASSERT_TRUE(plan.max_sequences.has_value());
  const int64_t n = *plan.max_sequences;
  ASSERT_GT(n, 0);
  const LlmPlan edge = plan_llm(m, d, options_for({n, n + 1}));
  EXPECT_TRUE(edge.rows[0].fits);
  EXPECT_FALSE(edge.rows[1].fits);
}

TEST(LlmPlan, PlansThatOverflowMemoryAreReportedNotRefused) {
  const LlmPlan plan = plan_llm(hand_model(), test_device(0.1), options_for({1, 8}));
  EXPECT_EQ(plan.max_sequences, std::optional<int64_t>(0));
  EXPECT_FALSE(plan.rows[0].fits);
  EXPECT_FALSE(plan.best_batch.has_value());
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes.front().find("does not fit"), std::string::npos);
}

TEST(LlmPlan, ContextsBeyondAStaticCacheAreFlagged) {
  DecoderModel m = hand_model();
  m.fixed_past = 255;
  m.fixed_sequence = 1;
  const LlmPlan plan = plan_llm(m, test_device(), options_for({1}, {128, 1024}));
  EXPECT_FALSE(plan.rows[0].contexts[0].beyond_graph);
  EXPECT_TRUE(plan.rows[0].contexts[1].beyond_graph);
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes.front().find("at most 256 positions"), std::string::npos);
}

TEST(LlmPlan, BestBatchMeetsTheSloAndTargetNeedsWholeReplicas) {
  LlmOptions o = options_for({1, 8, 64});
  o.tpot_slo_ms = 1e6;
  o.target_tokens_per_s = 1e6;
  const LlmPlan loose = plan_llm(hand_model(), test_device(), o);
  ASSERT_TRUE(loose.best_batch.has_value());
  EXPECT_GE(*loose.best_batch, 64);
  ASSERT_TRUE(loose.devices_needed.has_value());
  EXPECT_GE(*loose.devices_needed, 1);
  o.tpot_slo_ms = 1e-6;
  const LlmPlan tight = plan_llm(hand_model(), test_device(), o);
  EXPECT_FALSE(tight.best_batch.has_value());
}

TEST(LlmPlan, WeightPrecisionsScaleTheStoredBytes) {
  LlmOptions o = options_for({1});
  o.precision.weights = "int4";
  const DecoderModel m = hand_model();
  const double elements = 4 * 1024.0 * 4096 + 1024.0 * 32000;
  EXPECT_DOUBLE_EQ(plan_llm(m, test_device(), o).weights_bytes, elements * 0.5 + elements / 128 * 2);
  o.precision.weights = "fp16";
  EXPECT_DOUBLE_EQ(plan_llm(m, test_device(), o).weights_bytes, elements * 2);
  o.precision.weights = "int3";
  EXPECT_THROW(plan_llm(m, test_device(), o), Error);
}

TEST(TensorParallel, SplitsWeightsAndPaysTwoAllReducesPerLayer) {
  Device d = test_device();
  d.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 2}};
  LlmOptions o = options_for({1}, {256});
  const LlmPlan one = plan_llm(hand_model(), d, o);
  o.tensor_parallel = 2;
  const LlmPlan two = plan_llm(hand_model(), d, o);
  EXPECT_DOUBLE_EQ(two.rows[0].memory.weights_bytes, one.rows[0].memory.weights_bytes / 2);
  EXPECT_DOUBLE_EQ(two.rows[0].contexts[0].kv_bytes, one.rows[0].contexts[0].kv_bytes);
  const StepTime& step = two.rows[0].contexts[0].decode;
  const double block = 1024 * 2;  // one token's hidden state in fp16
  const double expected = 2 * 4 * allreduce_ms(block, 2, 100, 2, Collective::kBest) +
                          0.5 * allreduce_ms(32000 * 2, 2, 100, 2, Collective::kBest);
  EXPECT_DOUBLE_EQ(step.communication_ms, expected);
  EXPECT_LT(step.gemm_ms, one.rows[0].contexts[0].decode.gemm_ms);
  o.tensor_parallel = 3;
  EXPECT_THROW(plan_llm(hand_model(), d, o), Error);  // 3 does not divide 8 heads
  o.tensor_parallel = 2;
  EXPECT_THROW(plan_llm(hand_model(), test_device(), o), Error);  // no interconnect figures
}

// A calibrated entry's all-reduce curves price each all-reduce at its timed sizes, over the GPU
// count timed nearest tp; a --link figure keeps the model alone.
TEST(TensorParallel, CalibratedAllReduceCurvePricesTheMiddleSizes) {
  Device d = test_device();
  d.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 2}, {"allreduce_bus_gbps", 100}, {"allreduce_latency_us", 2}};
  AllReduceCurve two{2, {{1024, 30}, {1 << 20, 60}, {1 << 28, 3000}}}, four{4, {{1024, 50}, {1 << 20, 90}, {1 << 28, 4000}}};
  d.allreduce_curves.by_ranks = {two, four};
  LlmOptions o = options_for({1}, {256});
  o.tensor_parallel = 2;
  const LlmPlan curve = plan_llm(hand_model(), d, o);
  const StepTime& step = curve.rows[0].contexts[0].decode;
  const double block = 1024 * 2, logits = 32000 * 2;
  EXPECT_NEAR(step.communication_ms, (2 * 4 * two.us(block) + 0.5 * two.us(logits)) / 1e3, 1e-12);
  o.tensor_parallel = 4;  // the curve timed over four GPUs, not two carried by the model
  const LlmPlan four_plan = plan_llm(hand_model(), d, o);  // kept alive: the step is a reference into it
  const StepTime& over_four = four_plan.rows[0].contexts[0].decode;
  EXPECT_NEAR(over_four.communication_ms, (2 * 4 * four.us(block) + 0.5 * four.us(logits)) / 1e3, 1e-12);
  o.tensor_parallel = 2;
  o.link = "nvlink";
  const LlmPlan model = plan_llm(hand_model(), d, o);
  const StepTime& linked = model.rows[0].contexts[0].decode;
  EXPECT_DOUBLE_EQ(linked.communication_ms, 2 * 4 * allreduce_ms(block, 2, 100, 2, Collective::kBest) +
                                                0.5 * allreduce_ms(logits, 2, 100, 2, Collective::kBest));
}

TEST(TensorParallel, RingAndTreeAllReduce) {
  // Ring over 2: 2 latency steps + bytes / bandwidth; tree: 2 steps + 2 x bytes / bandwidth.
  EXPECT_NEAR(allreduce_ms(1e6, 2, 100, 2, Collective::kRing), (4e-6 + 1e-5) * 1e3, 1e-12);
  EXPECT_NEAR(allreduce_ms(1e6, 2, 100, 2, Collective::kTree), (4e-6 + 2e-5) * 1e3, 1e-12);
  // Small messages over 8: tree's 2 log2(8) = 6 steps beat the ring's 14.
  EXPECT_NEAR(allreduce_ms(1e3, 8, 100, 2, Collective::kBest), allreduce_ms(1e3, 8, 100, 2, Collective::kTree), 1e-15);
  EXPECT_EQ(allreduce_ms(1e6, 1, 100, 2, Collective::kRing), 0);
}

}  // namespace
}  // namespace modelcost::testing

namespace modelcost::testing {
namespace {

Device calibrated_device() {
  Device d = test_device();
  d.achievable.memory_bandwidth_gbps = 1000;
  d.achievable.tensor_tflops["fp16"] = 500;
  d.achievable.kernel_overhead_us = 2;
  d.achievable.kernel_gap_us = 1;
  d.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 2}};
  return d;
}

TEST(DeployedDecode, PaysTheCalibratedFixedCostPerKernelOfTheStepRun) {
  const DecoderModel m = llama_model();
  const LlmPlan plan = plan_llm(m, calibrated_device(), options_for({1}, {64}));
  const StepTime& t = plan.rows[0].contexts[0].decode;
  EXPECT_EQ(deployed_decode_kernels(m, 1), 10 * 2 + 3);
  EXPECT_DOUBLE_EQ(t.kernels, 23);
  EXPECT_NEAR(t.launch_ms, 23 * 3e-3, 1e-12);  // (2 us overhead + 1 us gap) per kernel
  // At batch 1 every product is memory bound: its weights over the achievable 1000 GB/s, with
  // the row it reads and writes (and the residual it adds).
  const double weights = m.gemm_weight_bytes, rows = 2.0 * (2 * (768 + 768 + 1280 + 1024) + 1256);
  EXPECT_NEAR(t.gemm_ms, (weights + rows) / 1e12 * 1e3, 1e-9);
  EXPECT_DOUBLE_EQ(t.total_ms(), plan.rows[0].contexts[0].tpot_ms);
}

// calibrate's curves of the step's own kernels: fixed us and GB/s, a weight product at batch 1
// and at batch 32, flash-decoding, the row kernels.
Device curve_device() {
  Device d = calibrated_device();
  d.achievable.kernel_curves["decode_gemm_m1"] = {3, 0, 0, 500};
  d.achievable.kernel_curves["decode_gemm_m32"] = {5, 0, 0, 250};
  d.achievable.kernel_curves["decode_attention"] = {6, 0, 0, 800};
  d.achievable.kernel_curves["decode_rowwise"] = {2, 0, 0, 1000};
  return d;
}

TEST(DeployedDecode, PricesEachKernelOnItsCalibratedCurveByRole) {
  const DecoderModel m = llama_model();
  const LlmPlan plan = plan_llm(m, curve_device(), options_for({1, 32, 64}, {100}));
  const StepTime& one = plan.rows[0].contexts[0].decode;
  const std::vector<std::string> order = {"embedding",      "RMSNorm",         "QKV product",    "rotary + KV append",
                                          "attention",      "output product",  "gate/up product", "MLP activation",
                                          "down product",   "LM head"};  // no collectives on one device
  ASSERT_EQ(one.by_role.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(one.by_role[i].role, order[i]);
  double kernels = 0, ms = 0;
  for (const KernelRoleTime& r : one.by_role) {
    kernels += r.kernels;
    ms += r.ms;
  }
  EXPECT_DOUBLE_EQ(kernels, static_cast<double>(deployed_decode_kernels(m, 1)));
  EXPECT_NEAR(ms, one.total_ms(), 1e-12);
  // The QKV product at batch 1: 256 x (4 + 2 x 2) x 64 fp16 weights and the row in and out, on the batch-1 curve.
  const double qkv_bytes = 256.0 * 512 * 2 + (256 + 512) * 2;
  EXPECT_NEAR(one.by_role[2].ms, 2 * (3 + qkv_bytes / 500e3) * 1e-3, 1e-12);  // two layers
  // Attention: two kernels per layer on its curve, reading 100 positions of 2 kv heads.
  const double attention_bytes = 2 * 100 * 64 * 2 * 2.0 + 2 * 4 * 64 * 2;
  EXPECT_EQ(one.by_role[4].kernels, 4);
  EXPECT_NEAR(one.by_role[4].ms, 2 * (6 + attention_bytes / 800e3) * 1e-3, 1e-12);
  // At batch 32 the products take the batch-32 curve; beyond it the roofline.
  const StepTime& many = plan.rows[1].contexts[0].decode;
  const double qkv32 = 256.0 * 512 * 2 + 32 * (256 + 512) * 2;
  EXPECT_NEAR(many.by_role[2].ms, 2 * (5 + qkv32 / 250e3) * 1e-3, 1e-12);
  const StepTime& beyond = plan.rows[2].contexts[0].decode;
  const double qkv64 = 256.0 * 512 * 2 + 64 * (256 + 512) * 2;
  EXPECT_NEAR(beyond.by_role[2].ms, 2 * (qkv64 / 1000e3 + 3) * 1e-3, 1e-12);  // 1000 GB/s, 2 + 1 us fixed
}

TEST(DeployedDecode, ReadsEachKvHeadOnceAndAddsTheCollectivesWithTensorParallelism) {
  const DecoderModel m = llama_model();
  LlmOptions o = options_for({8}, {1000, 3000});
  const LlmPlan one = plan_llm(m, calibrated_device(), o);
  const auto& c = one.rows[0].contexts;
  // 2000 more positions x 8 sequences x the KV bytes per token (2 layers x 2 kv heads x 64 x 2 x fp16).
  const double expected_ms = 8 * 2000 * one.kv_bytes_per_token / 1e12 * 1e3;
  EXPECT_NEAR(c[1].decode.attention_ms - c[0].decode.attention_ms, expected_ms, expected_ms * 1e-9);
  o.tensor_parallel = 2;
  const LlmPlan two = plan_llm(m, calibrated_device(), o);
  const StepTime& t = two.rows[0].contexts[0].decode;
  EXPECT_DOUBLE_EQ(t.kernels, deployed_decode_kernels(m, 2));
  EXPECT_EQ(deployed_decode_kernels(m, 2), 23 + 2 * 2 + 1);
  const double expected = 2 * 2 * allreduce_ms(8 * 256 * 2, 2, 100, 2, Collective::kBest) +
                          0.5 * allreduce_ms(8 * 1000 * 2, 2, 100, 2, Collective::kBest);
  EXPECT_DOUBLE_EQ(t.communication_ms, expected);
  EXPECT_LT(t.gemm_ms, c[0].decode.gemm_ms);
  // A calibrated all-reduce was timed inside a CUDA graph: its launch and gap are in its figures.
  Device calibrated = calibrated_device();
  calibrated.interconnect = {{"allreduce_bus_gbps", 100}, {"allreduce_latency_us", 2}};
  const StepTime graphed = plan_llm(m, calibrated, o).rows[0].contexts[0].decode;  // a copy: the plan is a temporary
  EXPECT_DOUBLE_EQ(graphed.communication_ms, expected);
  EXPECT_NEAR(t.launch_ms - graphed.launch_ms, (2 * 2 + 1) * 3e-3, 1e-12);
}

}  // namespace
}  // namespace modelcost::testing
