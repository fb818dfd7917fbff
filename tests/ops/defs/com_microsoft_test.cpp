// com.microsoft fusions: shapes and hand-computed MACs / FLOPs (docs/ops/com_microsoft.md).
#include <gtest/gtest.h>

#include "ops/defs/ms_test_support.h"

namespace modelcost::testing {
namespace {

// ---- fused Conv / MatMul / Gemm ----

TEST(ComMicrosoftFused, FusedConvAddsBiasResidualAndActivation) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{1, 3, 8, 8});
  b.weight("W", kFloat, {4, 3, 3, 3});
  b.weight("B", kFloat, {4});
  b.input("Z", kFloat, Shape{1, 4, 8, 8});
  auto& relu = b.node("FusedConv", {"X", "W", "B"}, {"Y"}, kMs);
  set_attr(relu, "activation", std::string("Relu"));
  set_attr(relu, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& sum = b.node("FusedConv", {"X", "W", "B", "Z"}, {"S"}, kMs);
  set_attr(sum, "activation", std::string("Sigmoid"));
  set_attr(sum, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("Y").output("S");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{1, 4, 8, 8}));
  const double macs = 4 * 64 * 3 * 9;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, macs);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * macs + 256 + 256);         // bias, Relu
  EXPECT_DOUBLE_EQ(run->cost("S").flops, 2 * macs + 256 + 256 + 4 * 256);  // bias, Z, Sigmoid
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 108 + 4);
}

TEST(ComMicrosoftFused, UnknownActivationIsAnError) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{1, 3, 8, 8});
  b.weight("W", kFloat, {4, 3, 3, 3});
  auto& n = b.node("FusedConv", {"X", "W"}, {"Y"}, kMs);
  set_attr(n, "activation", std::string("Swoosh"));
  b.output("Y");
  expect_node_error(b, "Y", "activation 'Swoosh'");
}

TEST(ComMicrosoftFused, NhwcConvAndNhwcFusedConvKeepChannelsLast) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{1, 8, 8, 3});
  b.weight("W", kFloat, {4, 3, 3, 3});
  auto& conv = b.node("NhwcConv", {"X", "W"}, {"Y"}, kMs);
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& fused = b.node("NhwcFusedConv", {"X", "W"}, {"F"}, kMs);
  set_attr(fused, "activation", std::string("Tanh"));
  set_attr(fused, "strides", std::vector<int64_t>{2, 2});
  b.output("Y").output("F");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{1, 8, 8, 4}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 6912);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * 6912);
  EXPECT_EQ(run->shape("F"), (Shape{1, 3, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("F").macs, 36 * 27);
  EXPECT_DOUBLE_EQ(run->cost("F").flops, 2 * 36 * 27 + 36);
}

TEST(ComMicrosoftFused, FusedMatMulTransposesAndScales) {
  ModelBuilder b = ms_model();
  b.input("A", kFloat, Shape{2, 8, 4});
  b.input("A3", kFloat, Shape{3, 2, 4, 6});
  b.weight("B", kFloat, {8, 5});
  b.weight("B6", kFloat, {6, 5});
  auto& t = b.node("FusedMatMul", {"A", "B"}, {"Y"}, kMs);
  set_attr(t, "transA", static_cast<int64_t>(1));
  set_attr(t, "alpha", 0.5f);
  auto& batch = b.node("FusedMatMul", {"A3", "B6"}, {"T"}, kMs);
  set_attr(batch, "transBatchA", static_cast<int64_t>(1));
  b.node("TransposeMatMul", {"A3", "B6"}, {"P"}, kMs);
  auto& act = b.node("FusedMatMulActivation", {"A3", "B6"}, {"R"}, kMs);
  set_attr(act, "activation", std::string("Relu"));
  b.output("Y").output("T").output("P").output("R");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 4, 5}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 2 * 4 * 5 * 8);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 640 + 40);  // alpha scales each output
  EXPECT_EQ(run->shape("T"), (Shape{2, 4, 3, 5}));    // [3, 2, 4, 6] -> [2, 4, 3, 6]
  EXPECT_DOUBLE_EQ(run->cost("T").macs, 2 * 4 * 3 * 5 * 6);
  EXPECT_EQ(run->shape("P"), (Shape{3, 2, 4, 5}));
  EXPECT_DOUBLE_EQ(run->cost("R").flops, 2 * 720 + 120);
}

TEST(ComMicrosoftFused, FusedGemm) {
  ModelBuilder b = ms_model();
  b.input("A", kFloat, Shape{4, 8});
  b.weight("B", kFloat, {6, 8});
  b.weight("C", kFloat, {6});
  auto& n = b.node("FusedGemm", {"A", "B", "C"}, {"Y"}, kMs);
  set_attr(n, "transB", static_cast<int64_t>(1));
  set_attr(n, "activation", std::string("LeakyRelu"));
  auto& scaled = b.node("FusedGemm", {"A", "B", "C"}, {"S"}, kMs);
  set_attr(scaled, "transB", static_cast<int64_t>(1));
  set_attr(scaled, "alpha", 2.0f);
  set_attr(scaled, "beta", 0.5f);
  b.output("Y").output("S");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 192);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 384 + 24 + 2 * 24);  // bias add, LeakyRelu
  EXPECT_DOUBLE_EQ(run->cost("S").flops, 384 + 3 * 24);       // alpha, bias add, beta
}

// ---- activations and bias fusions ----

TEST(ComMicrosoftActivation, GeluFamily) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{3, 4});
  b.weight("bias", kFloat, {4});
  b.node("Gelu", {"X"}, {"gelu"}, kMs);
  b.node("BiasGelu", {"X", "bias"}, {"bias_gelu"}, kMs);
  b.node("FastGelu", {"X"}, {"fast"}, kMs);
  b.node("FastGelu", {"X", "bias"}, {"fast_bias"}, kMs);
  auto& quick = b.node("QuickGelu", {"X"}, {"quick"}, kMs);
  set_attr(quick, "alpha", 1.702f);
  b.output("gelu").output("bias_gelu").output("fast").output("fast_bias").output("quick");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("bias_gelu"), (Shape{3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("gelu").flops, 5 * 12);
  EXPECT_DOUBLE_EQ(run->cost("bias_gelu").flops, 6 * 12);
  EXPECT_DOUBLE_EQ(run->cost("fast").flops, 9 * 12);
  EXPECT_DOUBLE_EQ(run->cost("fast_bias").flops, 10 * 12);
  EXPECT_DOUBLE_EQ(run->cost("quick").flops, 6 * 12);
  EXPECT_DOUBLE_EQ(run->cost("gelu").macs, 0);
}

TEST(ComMicrosoftActivation, BiasAddBiasSoftmaxBiasDropout) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{2, 5, 4});
  b.weight("bias", kFloat, {4});
  b.input("skip", kFloat, Shape{2, 5, 4});
  b.input("scores", kFloat, Shape{2, 3, 4});
  b.input("mask", kFloat, Shape{2, 1, 4});
  b.node("BiasAdd", {"X", "bias", "skip"}, {"add"}, kMs);
  auto& softmax = b.node("BiasSoftmax", {"scores", "mask"}, {"soft"}, kMs);
  set_attr(softmax, "axis", static_cast<int64_t>(2));
  set_attr(softmax, "is_inner_broadcast", static_cast<int64_t>(0));
  b.node("BiasDropout", {"X", "bias", "skip"}, {"drop", "drop_mask"}, kMs);
  b.output("add").output("soft").output("drop").output("drop_mask");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("add"), (Shape{2, 5, 4}));
  EXPECT_DOUBLE_EQ(run->cost("add").flops, 2 * 40);
  EXPECT_EQ(run->shape("soft"), (Shape{2, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("soft").flops, 6 * 24);  // bias add + softmax
  EXPECT_EQ(run->tensor("drop_mask").dtype, kBool);
  EXPECT_EQ(run->shape("drop_mask"), (Shape{2, 5, 4}));
  EXPECT_DOUBLE_EQ(run->cost("drop").flops, 2 * 40);  // bias and residual adds
}

TEST(ComMicrosoftActivation, GemmFastGeluAndBiasSplitGelu) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{3, 8});
  b.weight("W", kFloat, {8, 4});
  b.weight("bias", kFloat, {4});
  b.input("H", kFloat, Shape{1, 4, 8});
  b.weight("hbias", kFloat, {8});
  b.node("GemmFastGelu", {"X", "W", "bias"}, {"G"}, kMs);
  b.node("BiasSplitGelu", {"H", "hbias"}, {"S"}, kMs);
  b.output("G").output("S");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("G"), (Shape{3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("G").macs, 96);
  EXPECT_DOUBLE_EQ(run->cost("G").flops, 192 + (1 + 9) * 12);  // bias add + FastGelu
  EXPECT_EQ(run->shape("S"), (Shape{1, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("S").flops, 32 + 6 * 16);  // bias on the input; Gelu and product out
}

// ---- layer normalizations: 6/element + gamma + beta, 4/row; RMS: 3/element + gamma, 3/row ----

TEST(ComMicrosoftNorm, SkipLayerNormalizationOutputsAndFlops) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{2, 4, 8});
  b.input("skip", kFloat, Shape{2, 4, 8});
  b.weight("gamma", kFloat, {8});
  b.weight("beta", kFloat, {8});
  b.weight("bias", kFloat, {8});
  b.node("SkipLayerNormalization", {"X", "skip", "gamma", "beta", "bias"}, {"Y", "mean", "inv_std", "sum"}, kMs);
  b.node("SkipSimplifiedLayerNormalization", {"X", "skip", "gamma"}, {"R", "", "", "rsum"}, kMs);
  b.output("Y").output("mean").output("inv_std").output("sum").output("R").output("rsum");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 4, 8}));
  EXPECT_EQ(run->shape("mean"), (Shape{2, 4, 1}));
  EXPECT_EQ(run->tensor("inv_std").dtype, kFloat);
  EXPECT_EQ(run->shape("sum"), (Shape{2, 4, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * 64 + 64 * 8 + 4 * 8);  // skip + bias adds, norm
  EXPECT_EQ(run->shape("rsum"), (Shape{2, 4, 8}));
  EXPECT_DOUBLE_EQ(run->cost("R").flops, 64 + 64 * 4 + 3 * 8);
}

TEST(ComMicrosoftNorm, SkipMustBroadcastToTheInput) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{2, 4, 8});
  b.input("skip", kFloat, Shape{2, 5, 8});
  b.weight("gamma", kFloat, {8});
  b.node("SkipLayerNormalization", {"X", "skip", "gamma"}, {"Y"}, kMs);
  b.output("Y");
  expect_node_error(b, "Y", "do not broadcast");
}

TEST(ComMicrosoftNorm, SimplifiedAndMicrosoftLayerNormalization) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{3, 10});
  b.weight("scale", kFloat, {10});
  b.weight("B", kFloat, {10});
  b.node("SimplifiedLayerNormalization", {"X", "scale"}, {"rms", "rms_inv"});       // ai.onnx
  b.node("SimplifiedLayerNormalization", {"X", "scale"}, {"rms_ms"}, kMs);
  b.node("LayerNormalization", {"X", "scale", "B"}, {"ln", "ln_mean", "ln_inv"}, kMs);
  b.output("rms").output("rms_inv").output("rms_ms").output("ln").output("ln_mean");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("rms_inv"), (Shape{3, 1}));
  EXPECT_DOUBLE_EQ(run->cost("rms").flops, 30 * 4 + 3 * 3);
  EXPECT_DOUBLE_EQ(run->cost("rms_ms").flops, 30 * 4 + 3 * 3);
  EXPECT_EQ(run->shape("ln_mean"), (Shape{3, 1}));
  EXPECT_DOUBLE_EQ(run->cost("ln").flops, 30 * 8 + 3 * 4);
}

TEST(ComMicrosoftNorm, EmbedLayerNormalization) {
  ModelBuilder b = ms_model();
  b.input("ids", kInt32, Shape{2, 6});
  b.input("segments", kInt32, Shape{2, 6});
  b.weight("words", kFloat, {100, 16});
  b.weight("positions", kFloat, {32, 16});
  b.weight("segment_table", kFloat, {2, 16});
  b.weight("gamma", kFloat, {16});
  b.weight("beta", kFloat, {16});
  b.node("EmbedLayerNormalization", {"ids", "segments", "words", "positions", "segment_table", "gamma", "beta"},
         {"Y", "mask_index", "sum"}, kMs);
  b.output("Y").output("mask_index").output("sum");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 6, 16}));
  EXPECT_EQ(run->shape("mask_index"), (Shape{2}));
  EXPECT_EQ(run->tensor("mask_index").dtype, kInt32);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * 192 + 192 * 8 + 12 * 4);
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 1600 + 512 + 32 + 16 + 16);
}

TEST(ComMicrosoftNorm, GroupNormAndSkipGroupNormInNhwc) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{2, 4, 4, 8});
  b.input("skip", kFloat, Shape{2, 4, 4, 8});
  b.weight("gamma", kFloat, {8});
  b.weight("beta", kFloat, {8});
  b.weight("bias", kFloat, {8});
  auto& g = b.node("GroupNorm", {"X", "gamma", "beta"}, {"G"}, kMs);
  set_attr(g, "groups", static_cast<int64_t>(4));
  set_attr(g, "activation", static_cast<int64_t>(1));
  auto& s = b.node("SkipGroupNorm", {"X", "gamma", "beta", "skip", "bias"}, {"S", "sum"}, kMs);
  set_attr(s, "groups", static_cast<int64_t>(4));
  set_attr(s, "activation", static_cast<int64_t>(0));
  b.output("G").output("S").output("sum");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("G"), (Shape{2, 4, 4, 8}));
  EXPECT_EQ(run->shape("sum"), (Shape{2, 4, 4, 8}));
  const double norm = 256 * 8 + 8 * 4;  // 8 (batch x group) rows
  EXPECT_DOUBLE_EQ(run->cost("G").flops, norm + 256 * 5);  // SiLU
  EXPECT_DOUBLE_EQ(run->cost("S").flops, norm + 256 * 2);  // skip and bias adds

  ModelBuilder bad = ms_model();
  bad.input("X", kFloat, Shape{2, 4, 4, 8});
  bad.weight("gamma", kFloat, {8});
  bad.weight("beta", kFloat, {8});
  auto& bg = bad.node("GroupNorm", {"X", "gamma", "beta"}, {"G"}, kMs);
  set_attr(bg, "groups", static_cast<int64_t>(3));
  set_attr(bg, "activation", static_cast<int64_t>(0));
  bad.output("G");
  expect_node_error(bad, "G", "does not divide the 8 channels");
}

// ---- other math ----

TEST(ComMicrosoftMath, InverseAndTrilu) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{5, 4, 4});
  b.input("M", kFloat, Shape{3, 4});
  b.node("Inverse", {"X"}, {"inv"}, kMs);
  b.node("Trilu", {"M"}, {"tri"}, kMs);
  b.output("inv").output("tri");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("inv"), (Shape{5, 4, 4}));
  EXPECT_DOUBLE_EQ(run->cost("inv").flops, 5 * 2 * 64);
  EXPECT_EQ(run->shape("tri"), (Shape{3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("tri").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("tri").bytes_read, 48);

  ModelBuilder bad = ms_model();
  bad.input("X", kFloat, Shape{4, 3});
  bad.node("Inverse", {"X"}, {"inv"}, kMs);
  bad.output("inv");
  expect_node_error(bad, "inv", "not a batch of square matrices");
}

TEST(ComMicrosoftMath, GatedRelativePositionBias) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{2, 6, 32});
  b.weight("q_bias", kFloat, {32});
  b.input("rel_pos", kFloat, Shape{1, 4, 6, 6});
  b.weight("w", kFloat, {8, 4});
  b.weight("bias", kFloat, {4});
  b.weight("eco_a", kFloat, {1, 4, 1, 1});
  auto& n = b.node("GatedRelativePositionBias", {"q", "q_bias", "rel_pos", "w", "bias", "eco_a"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 4, 6, 6}));
  const double rows = 12 * 4;  // tokens x heads
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, rows * 8 * 4);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops,
                   2 * rows * 32 + rows * 8 + rows * 4 + rows * 4 + rows * 2 * 4 + rows * 4 + 288);
}

TEST(ComMicrosoftMath, RelativePositionBias) {
  ModelBuilder b = ms_model();
  b.weight("table", kFloat, {32, 4});
  b.ints("q_len", {6}, {});
  b.ints("k_len", {7}, {});
  auto& n = b.node("RelativePositionBias", {"table", "q_len", "k_len"}, {"Y"}, kMs);
  set_attr(n, "max_distance", static_cast<int64_t>(128));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{1, 4, 6, 7}));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 5 * 42);
}

TEST(ComMicrosoftMath, RfftAndIrfft) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{2, 16});
  b.input("F", kFloat, Shape{2, 9, 2});
  b.node("Rfft", {"X"}, {"spectrum"}, kMs);
  b.node("Irfft", {"F"}, {"signal"}, kMs);
  b.output("spectrum").output("signal");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("spectrum"), (Shape{2, 9, 2}));
  EXPECT_DOUBLE_EQ(run->cost("spectrum").flops, 2 * 2.5 * 16 * 4);  // 2.5 n log2 n per signal
  EXPECT_EQ(run->shape("signal"), (Shape{2, 16}));
  EXPECT_DOUBLE_EQ(run->cost("signal").flops, 2 * 2.5 * 16 * 4);
}

}  // namespace
}  // namespace modelcost::testing
