// Normalisation rules of the nn family, and Dropout.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

namespace {
// X [2, 3, 4, 4] (96 elements) with per-channel scale, B, mean, var.
ModelBuilder batch_norm_inputs(int opset) {
  ModelBuilder b(opset);
  b.input("x", kFloat, Shape{2, 3, 4, 4});
  for (const char* w : {"scale", "bias", "mean", "var"}) b.weight(w, kFloat, {3});
  return b;
}
}  // namespace

TEST(NnNorm, BatchNormInference) {
  ModelBuilder b = batch_norm_inputs(15);
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 3, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 96 + 5 * 3);  // x*a + b; a, b folded per channel
  EXPECT_DOUBLE_EQ(run->cost("y").params, 12);
}

TEST(NnNorm, BatchNormTrainingOutputs) {
  ModelBuilder b = batch_norm_inputs(15);
  auto& n = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "running_mean", "running_var"});
  set_attr(n, "training_mode", int64_t{1});
  ModelBuilder old = batch_norm_inputs(9);
  old.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "m", "v", "saved_m", "saved_v"});
  b.output("y");
  old.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("running_var"), (Shape{3}));
  EXPECT_EQ(run->tensor("running_mean").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 6 * 96 + 13 * 3);
  auto old_run = analyse(old);
  EXPECT_EQ(old_run->shape("saved_v"), (Shape{3}));
  EXPECT_DOUBLE_EQ(old_run->cost("y").flops, 6 * 96 + 13 * 3);  // extra outputs mean training before opset 14
}

TEST(NnNorm, BatchNormRejectsScaleOfWrongLength) {
  ModelBuilder b(15);
  b.input("x", kFloat, Shape{2, 3, 4, 4}).weight("scale", kFloat, {4});
  for (const char* w : {"bias", "mean", "var"}) b.weight(w, kFloat, {3});
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"bad_bn"});
  b.output("bad_bn");
  expect_node_error(b, "bad_bn", "scale [4] must have 3 elements");
}

TEST(NnNorm, InstanceNorm) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4, 4}).weight("scale", kFloat, {3}).weight("bias", kFloat, {3});
  b.node("InstanceNormalization", {"x", "scale", "bias"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 3, 4, 4}));
  // 8 per element (mean 1, variance 3, normalise 2, scale 1, bias 1) + 4 per (n, c).
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 8 * 96 + 4 * 6);
}

TEST(NnNorm, LayerNormStatisticsOutputs) {
  ModelBuilder b;
  b.input("x", kFloat16, Shape{2, 5, 8}).weight("scale", kFloat16, {8}).weight("bias", kFloat16, {8});
  b.weight("scale2", kFloat16, {5, 8});
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv_std"});
  set_attr(b.node("LayerNormalization", {"x", "scale2"}, {"y2", "mean2"}), "axis", int64_t{1});
  b.output("y").output("y2");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 5, 8}));
  EXPECT_EQ(run->tensor("y").dtype, kFloat16);
  EXPECT_EQ(run->shape("mean"), (Shape{2, 5, 1}));
  EXPECT_EQ(run->tensor("inv_std").dtype, kFloat);  // stash_type defaults to float
  EXPECT_EQ(run->shape("mean2"), (Shape{2, 1, 1}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 8 * 80 + 4 * 10);
  EXPECT_DOUBLE_EQ(run->cost("y2").flops, 7 * 80 + 4 * 2);  // no bias, 2 rows
}

TEST(NnNorm, LayerNormRejectsAxisOutOfRange) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 8}).weight("scale", kFloat, {8});
  set_attr(b.node("LayerNormalization", {"x", "scale"}, {"bad_ln"}), "axis", int64_t{2});
  b.output("bad_ln");
  expect_node_error(b, "bad_ln", "axis 2 is out of range");
}

TEST(NnNorm, GroupNorm) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{2, 6, 4, 4}).weight("scale", kFloat, {6}).weight("bias", kFloat, {6});
  set_attr(b.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}), "num_groups", int64_t{3});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 6, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 8 * 192 + 4 * 6);
}

TEST(NnNorm, GroupNormRejectsGroupsNotDividingChannels) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{2, 6, 4, 4}).weight("scale", kFloat, {6}).weight("bias", kFloat, {6});
  set_attr(b.node("GroupNormalization", {"x", "scale", "bias"}, {"bad_gn"}), "num_groups", int64_t{4});
  b.output("bad_gn");
  expect_node_error(b, "bad_gn", "num_groups 4");
}

TEST(NnNorm, MeanVarianceNormalizationDefaultAxes) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4, 4});
  b.node("MeanVarianceNormalization", {"x"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 3, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 6 * 96 + 4 * 3);  // statistics per channel over N, H, W
}

TEST(NnNorm, LpNormalization) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  b.node("LpNormalization", {"x"}, {"l2"});
  set_attr(b.node("LpNormalization", {"x"}, {"l1"}), "p", int64_t{1});
  b.output("l2").output("l1");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("l2"), (Shape{2, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("l2").flops, 3 * 24 + 6);  // + a square root per row
  EXPECT_DOUBLE_EQ(run->cost("l1").flops, 3 * 24);
}

TEST(NnNorm, LpNormalizationRejectsP3) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  set_attr(b.node("LpNormalization", {"x"}, {"bad_lp"}), "p", int64_t{3});
  b.output("bad_lp");
  expect_node_error(b, "bad_lp", "p must be 1 or 2");
}

TEST(NnNorm, LocalResponseNormalization) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 8, 4, 4});
  set_attr(b.node("LRN", {"x"}, {"y"}), "size", int64_t{5});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 8, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 128 * (5 + 5));
}

TEST(NnNorm, LrnRejectsZeroSize) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 8, 4, 4});
  set_attr(b.node("LRN", {"x"}, {"bad_lrn"}), "size", int64_t{0});
  b.output("bad_lrn");
  expect_node_error(b, "bad_lrn", "size must be positive");
}

TEST(NnDropout, InferenceIsAnIdentity) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4, 16});
  b.node("Dropout", {"x"}, {"y"});
  b.node("Dropout", {"x"}, {"y2", "mask"});
  b.output("y").output("mask");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{4, 16}));
  EXPECT_EQ(run->tensor("mask").dtype, kBool);
  EXPECT_EQ(run->shape("mask"), (Shape{4, 16}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("y").bytes(), 0);
  EXPECT_DOUBLE_EQ(run->cost("y2").bytes_written, 64 * 4 + 64);  // output + bool mask
}

TEST(NnDropout, TrainingModeDrawsAndScales) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4, 16}).floats("ratio", {0.1f}, {});
  auto* mode = b.graph().add_initializer();
  mode->set_name("training");
  mode->set_data_type(kBool);
  mode->add_int32_data(1);
  b.node("Dropout", {"x", "ratio", "training"}, {"y", "mask"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 64);
}

TEST(NnDropout, RejectsRatioOfOne) {
  ModelBuilder b(10);
  b.input("x", kFloat, Shape{4});
  set_attr(b.node("Dropout", {"x"}, {"bad_dropout"}), "ratio", 1.0f);
  b.output("bad_dropout");
  expect_node_error(b, "bad_dropout", "ratio must be in [0, 1)");
}

}  // namespace modelcost::testing
