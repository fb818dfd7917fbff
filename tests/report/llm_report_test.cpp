// The measured steps of `modelcost llm --measure` in the terminal and the JSON: the deployed step
// with its spread, kernel counts and busy time; the graph as exported with its ratio; a step not
// measured with its reason.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "modelcost/hardware.h"
#include "modelcost/llm.h"
#include "modelcost/measure.h"
#include "report/llm_report.h"
#include "llm_decoders.h"

namespace modelcost::testing {
namespace {

LlmPlan measured_plan(const Device& device) {
  const DecoderModel m = llama_model();
  LlmOptions o;
  o.prompt = 16;
  o.generate = 4;
  LlmPlan plan = plan_llm(m, device, o);
  LlmMeasuredStep deployed;
  deployed.phase = "decode";
  deployed.form = "deployed step";
  deployed.batch = 1;
  deployed.tokens = 20;
  deployed.tensor_parallel = 2;
  deployed.measured = true;
  deployed.measured_ms = 1.5;
  deployed.low_ms = 1.4;
  deployed.high_ms = 1.6;
  deployed.predicted_ms = 1.2;
  deployed.kernels = 29;
  deployed.predicted_kernels = 28;
  deployed.kernel_busy_ms = 1.45;
  deployed.kernel_breakdown = "rms_norm_kernel 5x 10 us";
  deployed.implementation = "flash-decoding 1 chunks of 64 positions";
  deployed.by_role = {{"QKV product", 2, 0.25, 2, 0.2}, {"logits gather", 0, 0, 1, 0.01}, {"all-reduce", 4, 0.3, 4, 0.1, 0.12}};
  LlmMeasuredStep exported = deployed;
  exported.form = "graph as exported";
  exported.tensor_parallel = 1;
  exported.kernels = exported.predicted_kernels = 0;
  exported.kernel_busy_ms = 0;
  exported.implementation.clear();
  exported.measured_ms = 4.8;
  LlmMeasuredStep refused = exported;
  refused.measured = false;
  refused.reason = "the graph has no KV cache";
  plan.measured = {deployed, exported, refused};
  return plan;
}

TEST(LlmReport, MeasuredStepsShowTheirFormSpreadAndKernels) {
  const Device device = make_custom_device(1000, 2000, 80, 0);
  std::ostringstream out;
  print_llm_plan(measured_plan(device), "m", out);
  const std::string text = out.str();
  EXPECT_NE(text.find("decode batch 1, 20 context, tp 2 (deployed step): 1.500 ms, predicted 1.200 ms (measured / "
                      "predicted 1.25); p10-p90 1.400-1.600 ms; 29 kernels (predicted 28)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kernels busy 1.450 ms per step: rms_norm_kernel 5x 10 us"), std::string::npos);
  EXPECT_NE(text.find("    QKV product                  2       0.250          2       0.200    1.25\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    logits gather                0       0.000          1       0.010       -\n"), std::string::npos) << text;
  // A collective's time in the step, then its own time alone (the wait for the slowest GPU left out).
  EXPECT_NE(text.find("    all-reduce                   4       0.300          4       0.100    3.00\n"
                      "      alone (own time)                   0.120                           1.20\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(graph as exported): 4.800 ms, predicted 1.200 ms (measured / predicted 4.00)\n"), std::string::npos);
  EXPECT_NE(text.find("(graph as exported): not measured: the graph has no KV cache"), std::string::npos);

  std::ostringstream json;
  write_llm_json(measured_plan(device), "m", json);
  const nlohmann::json steps = nlohmann::json::parse(json.str()).at("llm").at("measured");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0]["form"], "deployed step");
  EXPECT_EQ(steps[0]["tensor_parallel"], 2);
  EXPECT_EQ(steps[0]["kernels"], 29);
  EXPECT_EQ(steps[0]["predicted_kernels"], 28);
  EXPECT_DOUBLE_EQ(steps[0]["p90_ms"].get<double>(), 1.6);
  EXPECT_EQ(steps[2]["measured"], false);
  ASSERT_EQ(steps[0]["by_role"].size(), 3u);
  EXPECT_DOUBLE_EQ(steps[0]["by_role"][2]["alone_ms"].get<double>(), 0.12);
  EXPECT_EQ(steps[0]["by_role"][0]["role"], "QKV product");
  EXPECT_DOUBLE_EQ(steps[0]["by_role"][0]["predicted_ms"].get<double>(), 0.2);
}

// The prediction names its kernels as the CUDA module labels the measured step's, so the report
// can set them side by side.
TEST(LlmReport, PredictedRolesAreTheMeasuredStepsRoles) {
  Device device = make_custom_device(1000, 2000, 80, 0);
  device.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 2}};
  LlmOptions o;
  o.prompt = 16;
  o.generate = 4;
  o.tensor_parallel = 2;
  const LlmPlan plan = plan_llm(llama_model(), device, o);
  const auto& roles = serving_step_kernel_roles();
  const auto& predicted = plan.rows[0].contexts[0].decode.by_role;
  ASSERT_EQ(predicted.size(), 12u);  // every role, the collectives included
  for (const KernelRoleTime& r : predicted) EXPECT_NE(std::find(roles.begin(), roles.end(), r.role), roles.end()) << r.role;
}

// A mixture of experts from a config.json: parameters digit by digit, active ones, the experts.
TEST(LlmReport, ParametersAndExpertsOfAConfig) {
  Device device = make_custom_device(1000, 2000, 1000, 0);
  device.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 2}};
  LlmOptions o;
  o.prompt = 16;
  o.generate = 4;
  o.expert_parallel = 2;
  const LlmPlan plan =
      plan_llm(decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/mixtral-8x7b.json"), device, o);
  std::ostringstream out;
  print_llm_plan(plan, "mixtral", out);
  const std::string text = out.str();
  EXPECT_NE(text.find("mixtral: decoder LLM (config.json), 32 layers"), std::string::npos) << text;
  EXPECT_NE(text.find("parameters 46,702,792,704 (46.70 B), 12,879,925,248 (12.88 B) active per token; expert parallel over 2\n"),
            std::string::npos) << text;
  std::ostringstream json;
  write_llm_json(plan, "mixtral", json);
  const nlohmann::json j = nlohmann::json::parse(json.str()).at("llm");
  EXPECT_EQ(j["parameters"].get<double>(), 46702792704.0);
  EXPECT_EQ(j["expert_parallel"], 2);
  EXPECT_EQ(j["decoder"]["source"], "config.json");
  EXPECT_EQ(j["decoder"]["architecture"], "mixtral");
  EXPECT_EQ(j["decoder"]["experts"]["moe_layers"], 32);
  EXPECT_EQ(j["decoder"]["latent_attention"]["kv_lora_rank"], 0);
}

}  // namespace
}  // namespace modelcost::testing
