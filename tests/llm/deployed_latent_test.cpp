// Multi-head latent attention in the deployed step's prediction (src/llm/deployed_latent.cpp):
// DeepSeek-V2-Lite's and V3's config.json priced as the CUDA module runs them, kernel for kernel.
#include <gtest/gtest.h>

#include <string>

#include "llm/llm_test_support.h"
#include "llm/step_model.h"

namespace modelcost::testing {
namespace {

DecoderModel deepseek(const std::string& name) {
  return decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + name + ".json");
}

LlmOptions fp16_options() {
  LlmOptions o;
  o.prompt = 128;
  o.generate = 4;
  o.workspace_bytes = 0;
  o.precision = {"fp16", "fp16", "fp16"};
  return o;
}

const KernelRoleTime* role(const StepTime& t, const std::string& name) {
  for (const KernelRoleTime& r : t.by_role)
    if (r.role == name) return &r;
  return nullptr;
}

TEST(DeployedLatent, PricesTheKernelsTheRuntimeLaunches) {
  for (const std::string name : {"deepseek-v2-lite", "deepseek-v3"}) {
    const DecoderModel m = deepseek(name);
    const Device d = test_device(1000);
    const StepSetup s = make_step_setup(m, d, fp16_options());
    const struct {
      StepMix mix;
      StepKernelsOf of;
    } steps[] = {{StepMix::uniform(8, 1000, 0, 0, 0), {true, false, 1, 1}},
                 {StepMix::uniform(0, 0, 2, 128, 0), {false, true, 1, 1}},
                 {StepMix::uniform(8, 1000, 1, 64, 256), {true, true, 1, 1}}};
    for (const auto& step : steps) {
      const StepTime t = predict_deployed_step(s, step.mix);
      EXPECT_DOUBLE_EQ(t.kernels, static_cast<double>(deployed_step_kernels(m, step.of))) << name;
      // A decode's queries go into the latent and its outputs out of it; a prefill up-projects the latent.
      EXPECT_EQ(role(t, "query absorb product") != nullptr, step.of.decodes) << name;
      EXPECT_EQ(role(t, "value up product") != nullptr, step.of.decodes) << name;
      EXPECT_EQ(role(t, "latent up product") != nullptr, step.of.prefills) << name;
      EXPECT_EQ(role(t, "K/V expansion") != nullptr, step.of.prefills) << name;
      EXPECT_EQ(role(t, "query up product") != nullptr, m.latent.q_lora_rank > 0) << name;
    }
  }
  // V2-Lite's decode: per layer the first product, the append, the absorbed query product, the
  // attention's two kernels, the value product, the output product, two norms and the MLP's three
  // (the dense layer's, or the experts' with their shared expert's); then the embedding, the final
  // norm and the LM head.
  const DecoderModel lite = deepseek("deepseek-v2-lite");
  EXPECT_EQ(deployed_step_kernels(lite, {true, false, 1, 1}), 27 * 12 + 26 * (4 + 3) + 3);
}

TEST(DeployedLatent, DecodeReadsTheSharedLatentOncePerTileOfHeads) {
  const DecoderModel m = deepseek("deepseek-v2-lite");
  Device d = test_device(1000);
  d.achievable.memory_bandwidth_gbps = 1000;
  const StepSetup s = make_step_setup(m, d, fp16_options());
  const auto attention_ms = [&](int64_t context) { return role(predict_deployed_decode(s, 4, context), "attention")->ms; };
  // 16 heads, one tile: each of 4 sequences streams (512 + 64) fp16 per position and layer.
  const double per_position_ms = 27 * 4 * 576 * 2 / 1e12 * 1e3;
  EXPECT_NEAR(attention_ms(20000) - attention_ms(10000), 10000 * per_position_ms, 1e-3 * 10000 * per_position_ms);
}

// On 132 SMs, 8 sequences of 2048 run as one wave of 16 chunks of 128 positions (two key tiles):
// each block's bytes at its SM's share of the bandwidth, then the merge's, plus two kernels' fixed cost.
TEST(DeployedLatent, DecodeAttentionIsAWaveOfBlocksAtTheirSmsShare) {
  const DecoderModel m = deepseek("deepseek-v2-lite");
  Device d = test_device(1000);
  d.compute_units = 132;
  d.achievable.memory_bandwidth_gbps = 4000;
  d.achievable.kernel_overhead_us = 1;
  d.achievable.kernel_gap_us = 0.5;
  const StepSetup s = make_step_setup(m, d, fp16_options());
  const double partial = 4.0 * 16 * 514, block = 2.0 * 16 * 576 + 2 * 64 * 576 * 2 + partial;
  const double merge = 128 * partial + 2.0 * 8 * 16 * 512;
  const double us = block / (4000e9 / 132) * 1e6 + merge / 4000e9 * 1e6 + 2 * 1.5;
  EXPECT_NEAR(role(predict_deployed_decode(s, 8, 2048), "attention")->ms, 27 * us * 1e-3, 1e-9);
}

}  // namespace
}  // namespace modelcost::testing
