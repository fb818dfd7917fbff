// com.microsoft quantized ops (QEmbedLayerNormalization, DynamicQuantizeLSTM, QLinearWhere,
// QLinearReduceMean) and quantized weights counted by their logical elements.
#include <gtest/gtest.h>

#include "ops/defs/ms_test_support.h"

namespace modelcost::testing {

TEST(MsQuantized, QEmbedLayerNormalizationOutputsFloatAndCountsItsTables) {
  ModelBuilder b = ms_model();
  b.input("ids", kInt32, Shape{2, 6});
  b.input("segments", kInt32, Shape{2, 6});
  b.weight("words", kUint8Type, {100, 16});
  b.weight("positions", kUint8Type, {32, 16});
  b.weight("segment_table", kUint8Type, {2, 16});
  b.weight("gamma", kUint8Type, {16});
  b.weight("beta", kUint8Type, {16});
  b.input("mask", kInt32, Shape{2, 6});
  for (const char* s : {"w", "p", "s", "g", "b"}) b.floats(std::string(s) + "_scale", {0.1f}, {});
  for (const char* s : {"w", "p", "s", "g", "b"}) int_initializer(b, std::string(s) + "_zp", kUint8Type, {0}, {});
  b.node("QEmbedLayerNormalization",
         {"ids", "segments", "words", "positions", "segment_table", "gamma", "beta", "mask", "w_scale", "p_scale",
          "s_scale", "g_scale", "b_scale", "w_zp", "p_zp", "s_zp", "g_zp", "b_zp"},
         {"Y", "mask_index"}, kMs);
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 6, 16}));
  EXPECT_EQ(run->tensor("Y").dtype, kFloat);
  // EmbedLayerNormalization's count plus a dequantize of each gathered element and gamma/beta.
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * 192 + 192 * 8 + 12 * 4 + 2 * (3 * 192 + 32));
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 1600 + 512 + 32 + 16 + 16 + 5);  // + the five float scales
}

TEST(MsQuantized, DynamicQuantizeLstmCostsAsLstmWithTransposedInt8Weights) {
  ModelBuilder b = ms_model();
  b.input("X", kFloat, Shape{5, 2, 8});  // seq, batch, input
  b.weight("W", kInt8, {1, 8, 4 * 16});
  b.weight("R", kInt8, {1, 16, 4 * 16});
  b.weight("B", kFloat, {1, 8 * 16});
  // The four quantization parameters ORT's schema requires after the optional LSTM inputs.
  b.input("W_scale", kFloat, Shape{1}).input("W_zp", kInt8, Shape{1}).input("R_scale", kFloat, Shape{1}).input("R_zp", kInt8, Shape{1});
  auto& n = b.node("DynamicQuantizeLSTM", {"X", "W", "R", "B", "", "", "", "", "W_scale", "W_zp", "R_scale", "R_zp"},
                   {"Y", "Y_h", "Y_c"}, kMs);
  set_attr(n, "hidden_size", int64_t{16});
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{5, 1, 2, 16}));
  EXPECT_EQ(run->shape("Y_c"), (Shape{1, 2, 16}));
  const double hidden_values = 5 * 2 * 16;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, hidden_values * 4 * (8 + 16));
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 8 * 64 + 16 * 64 + 128);
}

TEST(MsQuantized, QLinearWhereAndReduceMean) {
  ModelBuilder b = ms_model();
  b.input("cond", kBool, Shape{4, 1});
  b.input("x", kUint8Type, Shape{4, 6});
  b.input("y", kUint8Type, Shape{1, 6});
  scale_and_zero_point(b, "q", kUint8Type);
  b.node("QLinearWhere", {"cond", "x", "q_scale", "q_zp", "y", "q_scale", "q_zp", "q_scale", "q_zp"}, {"w"}, kMs);
  auto& r = b.node("QLinearReduceMean", {"w", "q_scale", "q_zp", "q_scale", "q_zp"}, {"m"}, kMs);
  set_attr(r, "axes", std::vector<int64_t>{1});
  set_attr(r, "keepdims", int64_t{0});
  b.output("m");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("w"), (Shape{4, 6}));
  EXPECT_EQ(run->shape("m"), (Shape{4}));
  EXPECT_DOUBLE_EQ(run->cost("w").flops, 5 * 24);
  EXPECT_DOUBLE_EQ(run->cost("m").flops, 3 * 24 + 4 * 4);
}

TEST(MsQuantized, Int8EmbeddingReadThroughGatherThenDequantizeCountsInParams) {
  ModelBuilder b;
  b.input("ids", kInt64, Shape{1, 7});
  b.weight("table", kInt8, {1000, 32});
  b.floats("scale", {0.1f}, {});
  b.node("Gather", {"table", "ids"}, {"rows"});
  b.node("DequantizeLinear", {"rows", "scale"}, {"emb"});
  b.output("emb");
  auto run = analyse(b);
  EXPECT_DOUBLE_EQ(run->analysis.totals.params, 32000 + 1);
  EXPECT_DOUBLE_EQ(run->cost("rows").params, 32000);
}

TEST(MsQuantized, QOperatorConvCountsItsInt32BiasLikeQdq) {
  ModelBuilder b;
  b.input("x", kUint8Type, Shape{1, 3, 8, 8});
  b.weight("w", kInt8, {4, 3, 3, 3});
  b.weight("bias", kInt32, {4});
  scale_and_zero_point(b, "x", kUint8Type);
  scale_and_zero_point(b, "w", kInt8);
  scale_and_zero_point(b, "y", kUint8Type);
  b.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"}, {"y"});
  b.output("y");
  EXPECT_DOUBLE_EQ(analyse(b)->cost("y").params, 108 + 4 + 3);  // weights, bias, the float scales
}

}  // namespace modelcost::testing
