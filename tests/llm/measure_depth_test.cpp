// --measure of a model larger than the GPU: the deployed step runs at two depths that fit and is
// extrapolated to the model's own.
#include <gtest/gtest.h>

#include "llm/llm_test_support.h"

namespace modelcost::testing {
namespace {

DecoderModel config(const std::string& name) {
  return decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + name + ".json");
}

TEST(MeasureDepth, AModelThatFitsRunsAtItsOwnDepth) {
  EXPECT_EQ(measurable_depths(config("llama-3-8b"), 1, 2048, 1, 80e9), std::vector<int64_t>{32});
}

TEST(MeasureDepth, Llama70BOnOneCardRunsAtTheDeepestDepthThatFitsAndHalfOfIt) {
  const DecoderModel m = config("llama-3-70b");
  const std::vector<int64_t> depths = measurable_depths(m, 1, 2048, 1, 80e9);
  ASSERT_EQ(depths.size(), 2u);
  EXPECT_LE(deployed_step_device_bytes(m, depths[0], 1, 2048, 1), 0.9 * 80e9);
  EXPECT_GT(deployed_step_device_bytes(m, depths[0] + 1, 1, 2048, 1), 0.9 * 80e9);
  EXPECT_EQ(depths[1], depths[0] / 2);
  // One layer: q, k, v, o, gate/up, down and two norms in fp16, and its KV cache.
  const double layer = 2.0 * (8192.0 * (64 + 16) * 128 + 8192.0 * 64 * 128 + 8192.0 * 2 * 28672 + 28672.0 * 8192 + 2 * 8192 +
                              2.0 * 1 * 8 * 2048 * 128);
  EXPECT_DOUBLE_EQ(deployed_step_device_bytes(m, 2, 1, 2048, 1) - deployed_step_device_bytes(m, 1, 1, 2048, 1), layer);
  // Over 4 devices it fits whole.
  EXPECT_EQ(measurable_depths(m, 1, 2048, 4, 80e9), std::vector<int64_t>{80});
}

// DeepSeek-V3 on one 141 GB card: its three dense layers in both runs, which differ by MoE layers
// only (at 5 and 2 layers the second run would hold one dense layer and one MoE layer, and the
// line through them would take 4.5 fewer kernels and about 3 ms less per MoE layer).
TEST(MeasureDepth, BothRunsOfAMixtureKeepItsDenseLayers) {
  const DecoderModel m = config("deepseek-v3");
  const std::vector<int64_t> depths = measurable_depths(m, 1, 2048, 1, 141e9);
  ASSERT_EQ(depths.size(), 2u);
  EXPECT_LE(deployed_step_device_bytes(m, depths[0], 1, 2048, 1), 0.9 * 141e9);
  EXPECT_GT(deployed_step_device_bytes(m, depths[0] + 1, 1, 2048, 1), 0.9 * 141e9);
  EXPECT_GE(depths[1], 4);  // three dense layers and at least one MoE layer
  EXPECT_LT(depths[1], depths[0]);
  // A run of a few layers keeps one MoE layer however many dense layers the model has first.
  const double moe_layer = deployed_step_device_bytes(m, 5, 1, 2048, 1) - deployed_step_device_bytes(m, 4, 1, 2048, 1);
  EXPECT_DOUBLE_EQ(deployed_step_device_bytes(m, 2, 1, 2048, 1) - deployed_step_device_bytes(m, 1, 1, 2048, 1),
                   deployed_step_device_bytes(m, 4, 1, 2048, 1) - deployed_step_device_bytes(m, 3, 1, 2048, 1));
  EXPECT_GT(moe_layer, 10e9);
}

TEST(MeasureDepth, TimesExtrapolateLinearlyInTheLayers) {
  EXPECT_DOUBLE_EQ(extrapolate_to_depth(80, 40, 10.0, 20, 6.0), 18.0);
  EXPECT_DOUBLE_EQ(extrapolate_to_depth(32, 32, 5.0, 32, 5.0), 5.0);
}

}  // namespace
}  // namespace modelcost::testing
