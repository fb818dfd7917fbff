// Convolution rules of the nn family: Conv, ConvTranspose, DeformConv, Col2Im.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(NnConv, ResNetStemShapeAndCost) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 3, 224, 224}).weight("w", kFloat, {64, 3, 7, 7}).weight("bias", kFloat, {64});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"});
  set_attr(conv, "kernel_shape", std::vector<int64_t>{7, 7});
  set_attr(conv, "strides", std::vector<int64_t>{2, 2});
  set_attr(conv, "pads", std::vector<int64_t>{3, 3, 3, 3});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 64, 112, 112}));
  EXPECT_EQ(run->tensor("y").dtype, kFloat);
  // 64 * 112*112 outputs, each 3*7*7 MACs; bias: one add per output.
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 118013952);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 118013952.0 + 64 * 112 * 112);
  EXPECT_DOUBLE_EQ(run->cost("y").params, 64 * 3 * 49 + 64);
}

// A 1x1 conv at stride 2 (ResNet's downsampling shortcut) reads every other row and column of its
// input: a quarter of it, plus the weights. A 3x3 window at stride 2 overlaps its neighbours and
// reads everything; a 2x2 at stride 3 with a pad of 1 reads 2 of every 3 positions, less the pad.
TEST(NnConv, BytesReadCountTheInputPositionsTheWindowsRead) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 8, 12, 12}).weight("w1", kFloat, {16, 8, 1, 1});
  b.weight("w3", kFloat, {16, 8, 3, 3}).weight("w2", kFloat, {16, 8, 2, 2});
  auto& shortcut = b.node("Conv", {"x", "w1"}, {"s"});
  set_attr(shortcut, "strides", std::vector<int64_t>{2, 2});
  auto& dense = b.node("Conv", {"x", "w3"}, {"d"});
  set_attr(dense, "strides", std::vector<int64_t>{2, 2});
  set_attr(dense, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& gapped = b.node("Conv", {"x", "w2"}, {"g"});
  set_attr(gapped, "strides", std::vector<int64_t>{3, 3});
  set_attr(gapped, "pads", std::vector<int64_t>{1, 1, 0, 0});
  b.output("s").output("d").output("g");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("s"), (Shape{2, 16, 6, 6}));
  EXPECT_DOUBLE_EQ(run->cost("s").bytes_read, 4.0 * (2 * 8 * 6 * 6 + 16 * 8));
  EXPECT_DOUBLE_EQ(run->cost("d").bytes_read, 4.0 * (2 * 8 * 12 * 12 + 16 * 8 * 9));
  // Windows start at -1, 2, 5, 8: rows {0}, {2, 3}, {5, 6}, {8, 9} of 12, 7 positions per dim.
  EXPECT_EQ(run->shape("g"), (Shape{2, 16, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("g").bytes_read, 4.0 * (2 * 8 * 7 * 7 + 16 * 8 * 4));
}

TEST(NnConv, DepthwiseGroupConv) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 32, 112, 112}).weight("w", kFloat, {32, 1, 3, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "group", int64_t{32});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 32, 112, 112}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 32.0 * 112 * 112 * 9);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 32.0 * 112 * 112 * 9);
}

TEST(NnConv, OneDimensionalDilatedGrouped) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 4, 10}).weight("w", kFloat, {6, 2, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "group", int64_t{2});
  set_attr(conv, "dilations", std::vector<int64_t>{2});
  b.output("y");
  auto run = analyse(b);
  // Dilated kernel spans 5: 10 - 5 + 1 = 6 positions.
  EXPECT_EQ(run->shape("y"), (Shape{2, 6, 6}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 2 * 6 * 6 * 2 * 3);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 432);
}

TEST(NnConv, ThreeDimensionalSameUpper) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2, 5, 6, 7}).weight("w", kFloat, {4, 2, 3, 3, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "auto_pad", std::string("SAME_UPPER"));
  set_attr(conv, "strides", std::vector<int64_t>{2, 2, 2});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 4, 3, 3, 4}));  // ceil(in / stride)
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 4 * 36 * 2 * 27);
}

TEST(NnConv, ValidPadding) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 7, 7}).weight("w", kFloat, {1, 1, 3, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "auto_pad", std::string("VALID"));
  set_attr(conv, "strides", std::vector<int64_t>{2, 2});
  set_attr(conv, "pads", std::vector<int64_t>{5, 5, 5, 5});  // ignored under VALID
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 1, 3, 3}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 81);
}

namespace {
ModelBuilder conv_model(const Shape& x, const Shape& w, int64_t group = 1) {
  ModelBuilder b;
  b.input("x", kFloat, x).weight("w", kFloat, w);
  auto& conv = b.node("Conv", {"x", "w"}, {"bad_conv"});
  if (group != 1) set_attr(conv, "group", group);
  b.output("bad_conv");
  return b;
}
}  // namespace

TEST(NnConv, RejectsChannelMismatch) {
  expect_node_error(conv_model({1, 3, 8, 8}, {8, 4, 3, 3}), "bad_conv", "channels");
}

TEST(NnConv, RejectsOutputChannelsNotDivisibleByGroup) {
  expect_node_error(conv_model({1, 4, 8, 8}, {5, 2, 3, 3}, 2), "bad_conv", "not divisible by group");
}

TEST(NnConv, RejectsKernelLargerThanPaddedInput) {
  expect_node_error(conv_model({1, 1, 4, 4}, {1, 1, 7, 7}), "bad_conv", "larger than the padded input");
}

TEST(NnConv, RejectsNonPositiveStride) {
  ModelBuilder b = conv_model({1, 1, 8, 8}, {1, 1, 3, 3});
  set_attr(*b.graph().mutable_node(0), "strides", std::vector<int64_t>{0, 1});
  expect_node_error(b, "bad_conv", "strides must be positive");
}

TEST(NnConv, RejectsKernelShapeDisagreeingWithWeight) {
  ModelBuilder b = conv_model({1, 1, 8, 8}, {1, 1, 3, 3});
  set_attr(*b.graph().mutable_node(0), "kernel_shape", std::vector<int64_t>{5, 5});
  expect_node_error(b, "bad_conv", "does not match the weight");
}

TEST(NnConv, RejectsBiasOfWrongLength) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 3, 8, 8}).weight("w", kFloat, {8, 3, 3, 3}).weight("bias", kFloat, {7});
  b.node("Conv", {"x", "w", "bias"}, {"bad_conv"});
  b.output("bad_conv");
  expect_node_error(b, "bad_conv", "must have 8 elements");
}

TEST(NnConvTranspose, StridedUpsampleWithBias) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 16, 14, 14}).weight("w", kFloat, {16, 8, 4, 4}).weight("bias", kFloat, {8});
  auto& n = b.node("ConvTranspose", {"x", "w", "bias"}, {"y"});
  set_attr(n, "strides", std::vector<int64_t>{2, 2});
  set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 8, 28, 28}));  // 2*13 + 4 - 2
  // Each of the 16*14*14 input values scatters an 8 x 4x4 block.
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 16 * 196 * 8 * 16);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 401408.0 + 8 * 28 * 28);
}

TEST(NnConvTranspose, GroupedOneDimensional) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 5}).weight("w", kFloat, {4, 3, 3});
  set_attr(b.node("ConvTranspose", {"x", "w"}, {"y"}), "group", int64_t{2});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 6, 7}));  // M = 3 * group
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 4 * 5 * 3 * 3);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 180);
}

TEST(NnConvTranspose, OutputPaddingOutputShapeAndSamePadding) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2, 3, 3}).input("x5", kFloat, Shape{1, 2, 5, 5});
  b.weight("w", kFloat, {2, 1, 3, 3}).weight("w3", kFloat, {2, 3, 3, 3});
  auto& padded = b.node("ConvTranspose", {"x", "w"}, {"padded"});
  set_attr(padded, "strides", std::vector<int64_t>{2, 2});
  set_attr(padded, "output_padding", std::vector<int64_t>{1, 1});
  auto& explicit_shape = b.node("ConvTranspose", {"x5", "w3"}, {"explicit"});
  set_attr(explicit_shape, "strides", std::vector<int64_t>{2, 2});
  set_attr(explicit_shape, "output_shape", std::vector<int64_t>{10, 11});
  auto& same = b.node("ConvTranspose", {"x5", "w3"}, {"same"});
  set_attr(same, "strides", std::vector<int64_t>{2, 2});
  set_attr(same, "auto_pad", std::string("SAME_LOWER"));
  b.output("padded").output("explicit").output("same");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("padded"), (Shape{1, 1, 8, 8}));  // 2*2 + 1 + 3
  EXPECT_EQ(run->shape("explicit"), (Shape{1, 3, 10, 11}));
  EXPECT_EQ(run->shape("same"), (Shape{1, 3, 10, 10}));  // in * stride
  EXPECT_DOUBLE_EQ(run->cost("explicit").macs, 2 * 25 * 3 * 9);
}

TEST(NnConvTranspose, RejectsWeightChannelMismatch) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 5, 5}).weight("w", kFloat, {3, 2, 3, 3});
  b.node("ConvTranspose", {"x", "w"}, {"bad_deconv"});
  b.output("bad_deconv");
  expect_node_error(b, "bad_deconv", "channels");
}

TEST(NnConvTranspose, RejectsOutputPaddingNotBelowStride) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2, 5, 5}).weight("w", kFloat, {2, 2, 3, 3});
  auto& n = b.node("ConvTranspose", {"x", "w"}, {"bad_deconv"});
  set_attr(n, "strides", std::vector<int64_t>{2, 2});
  set_attr(n, "output_padding", std::vector<int64_t>{2, 2});
  b.output("bad_deconv");
  expect_node_error(b, "bad_deconv", "output_padding");
}

TEST(NnDeformConv, ConvProductsPlusBilinearSampling) {
  ModelBuilder b(19);
  b.input("x", kFloat, Shape{1, 4, 8, 8}).weight("w", kFloat, {6, 4, 3, 3});
  b.input("offset", kFloat, Shape{1, 18, 6, 6}).input("mask", kFloat, Shape{1, 9, 6, 6});
  b.weight("bias", kFloat, {6});
  b.node("DeformConv", {"x", "w", "offset"}, {"plain"});
  b.node("DeformConv", {"x", "w", "offset", "bias", "mask"}, {"masked"});
  b.output("plain").output("masked");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("plain"), (Shape{1, 6, 6, 6}));
  const double macs = 6 * 36 * 4 * 9;
  const double samples = 4 * 9 * 36;  // every (channel, tap) of every output position
  EXPECT_DOUBLE_EQ(run->cost("plain").macs, macs);
  EXPECT_DOUBLE_EQ(run->cost("plain").flops, 2 * macs + 7 * samples);
  EXPECT_DOUBLE_EQ(run->cost("masked").flops, 2 * macs + 8 * samples + 6 * 36);
}

TEST(NnDeformConv, RejectsOffsetOfWrongSize) {
  ModelBuilder b(19);
  b.input("x", kFloat, Shape{1, 4, 8, 8}).weight("w", kFloat, {6, 4, 3, 3});
  b.input("offset", kFloat, Shape{1, 9, 6, 6});
  b.node("DeformConv", {"x", "w", "offset"}, {"bad_deform"});
  b.output("bad_deform");
  expect_node_error(b, "bad_deform", "offset");
}

TEST(NnCol2Im, RebuildsImageFromBlocks) {
  ModelBuilder b(18);
  b.input("cols", kFloat, Shape{1, 8, 9}).ints("image", {4, 4}).ints("block", {2, 2});
  b.node("Col2Im", {"cols", "image", "block"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 2, 4, 4}));  // 3x3 blocks of 2x2 over 4x4
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 72);       // one add per input value
}

TEST(NnCol2Im, RejectsBlockCountMismatch) {
  ModelBuilder b(18);
  b.input("cols", kFloat, Shape{1, 8, 10}).ints("image", {4, 4}).ints("block", {2, 2});
  b.node("Col2Im", {"cols", "image", "block"}, {"bad_col2im"});
  b.output("bad_col2im");
  expect_node_error(b, "bad_col2im", "number of blocks");
}

}  // namespace modelcost::testing
