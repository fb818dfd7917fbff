// Quantization family: (de)quantization, integer and QLinear products, the com.microsoft quantized
// ops. Every figure is worked out by hand from docs/ops/quantization.md.
#include <gtest/gtest.h>

#include "ops/defs/ms_test_support.h"

namespace modelcost::testing {
namespace {

TEST(QuantizationLinear, QuantizeAndDequantizePerTensor) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{2, 3, 4});
  scale_and_zero_point(b, "q", kInt8);
  b.node("QuantizeLinear", {"X", "q_scale", "q_zp"}, {"Q"});
  b.node("DequantizeLinear", {"Q", "q_scale", "q_zp"}, {"D"});
  b.node("QuantizeLinear", {"X", "q_scale"}, {"U"});  // no zero point: uint8
  b.output("D").output("U");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Q"), (Shape{2, 3, 4}));
  EXPECT_EQ(run->tensor("Q").dtype, kInt8);
  EXPECT_EQ(run->tensor("U").dtype, kUint8);
  EXPECT_EQ(run->tensor("D").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("Q").flops, 3 * 24);  // divide, round, add zero point
  EXPECT_DOUBLE_EQ(run->cost("D").flops, 2 * 24);  // subtract zero point, multiply
  EXPECT_DOUBLE_EQ(run->cost("Q").macs, 0);
}

TEST(QuantizationLinear, PerAxisScaleMustMatchTheAxis) {
  ModelBuilder ok;
  ok.input("X", kFloat, Shape{2, 3, 4});
  ok.floats("s", {0.1f, 0.2f, 0.3f});
  ok.node("QuantizeLinear", {"X", "s"}, {"Q"});
  ok.output("Q");
  EXPECT_EQ(analyse(ok)->shape("Q"), (Shape{2, 3, 4}));

  ModelBuilder bad;
  bad.input("X", kFloat, Shape{2, 3, 4});
  bad.floats("s", {0.1f, 0.2f, 0.3f, 0.4f});
  bad.node("QuantizeLinear", {"X", "s"}, {"Q"});  // axis defaults to 1 (3 values)
  bad.output("Q");
  expect_node_error(bad, "Q", "per-axis scale [4] does not match axis 1");
}

TEST(QuantizationLinear, BlockedScaleAndOutputDtypeOfOpset21) {
  ModelBuilder b(21);
  b.input("X", kFloat, Shape{2, 8});
  b.floats("s", {1, 1, 1, 1}, {2, 2});
  auto& q = b.node("QuantizeLinear", {"X", "s"}, {"Q"});
  set_attr(q, "block_size", static_cast<int64_t>(4));
  set_attr(q, "output_dtype", static_cast<int64_t>(kInt8));
  b.output("Q");
  auto run = analyse(b);
  EXPECT_EQ(run->tensor("Q").dtype, kInt8);
  EXPECT_DOUBLE_EQ(run->cost("Q").flops, 3 * 16);

  ModelBuilder bad(21);
  bad.input("X", kFloat, Shape{2, 8});
  bad.floats("s", {1, 1, 1, 1, 1, 1}, {2, 3});
  auto& bq = bad.node("QuantizeLinear", {"X", "s"}, {"Q"});
  set_attr(bq, "block_size", static_cast<int64_t>(4));
  bad.output("Q");
  expect_node_error(bad, "Q", "blocked scale [2,3]");
}

TEST(QuantizationLinear, DequantizedWeightCountsInParams) {
  ModelBuilder b;
  b.weight("Wq", kInt8, {16, 8});
  b.floats("s", {0.1f}, {});
  b.node("DequantizeLinear", {"Wq", "s"}, {"W"});
  b.output("W");
  auto run = analyse(b);
  // 128 int8 weights + the float scale (a float initializer like any other).
  EXPECT_DOUBLE_EQ(run->cost("W").params, 128 + 1);
  EXPECT_DOUBLE_EQ(run->analysis.totals.params, 128 + 1);
  EXPECT_DOUBLE_EQ(run->cost("W").flops, 2 * 128);
}

TEST(QuantizationLinear, DynamicQuantizeLinear) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{10, 4});
  b.node("DynamicQuantizeLinear", {"X"}, {"Y", "Y_scale", "Y_zp"});
  b.output("Y").output("Y_scale").output("Y_zp");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{10, 4}));
  EXPECT_EQ(run->tensor("Y").dtype, kUint8);
  EXPECT_EQ(run->shape("Y_scale"), Shape{});
  EXPECT_EQ(run->tensor("Y_zp").dtype, kUint8);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 5 * 40);  // min, max, then quantize
}

// QLinearConv x [1, 3, 8, 8] uint8, w [4, 3, 3, 3] int8, pads 1 -> [1, 4, 8, 8].
ModelBuilder qlinear_conv(const std::string& domain) {
  ModelBuilder b;
  if (!domain.empty()) b.opset(domain, 1);
  b.input("x", kUint8, Shape{1, 3, 8, 8});
  b.weight("w", kInt8, {4, 3, 3, 3});
  scale_and_zero_point(b, "x", kUint8);
  scale_and_zero_point(b, "w", kInt8);
  scale_and_zero_point(b, "y", kUint8);
  auto& n = b.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"}, {"y"}, domain);
  set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y");
  return b;
}

TEST(QuantizationProducts, QLinearConvCountsLikeConvPlusRequantization) {
  for (const std::string domain : {"", "com.microsoft"}) {
    auto run = analyse(qlinear_conv(domain));
    EXPECT_EQ(run->shape("y"), (Shape{1, 4, 8, 8})) << domain;
    EXPECT_EQ(run->tensor("y").dtype, kUint8);
    const NodeCost& c = run->cost("y");
    EXPECT_DOUBLE_EQ(c.macs, 4 * 64 * 3 * 9);
    EXPECT_DOUBLE_EQ(c.flops, 2 * 6912 + 3 * 256);
    EXPECT_DOUBLE_EQ(c.params, 4 * 3 * 3 * 3 + 3);  // the int8 weight + 3 float scales
  }
}

TEST(QuantizationProducts, ConvIntegerAndMatMulInteger) {
  ModelBuilder b;
  b.input("x", kUint8, Shape{1, 3, 8, 8});
  b.weight("w", kUint8, {4, 3, 3, 3});
  b.input("a", kUint8, Shape{3, 4});
  b.weight("bw", kInt8, {4, 5});
  b.node("ConvInteger", {"x", "w"}, {"cy"});
  b.node("MatMulInteger", {"a", "bw"}, {"my"});
  b.output("cy").output("my");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("cy"), (Shape{1, 4, 6, 6}));
  EXPECT_EQ(run->tensor("cy").dtype, kInt32);
  EXPECT_DOUBLE_EQ(run->cost("cy").macs, 4 * 36 * 27);
  EXPECT_DOUBLE_EQ(run->cost("cy").flops, 2 * 3888);
  EXPECT_EQ(run->shape("my"), (Shape{3, 5}));
  EXPECT_DOUBLE_EQ(run->cost("my").macs, 60);
  EXPECT_DOUBLE_EQ(run->cost("my").flops, 120);
  EXPECT_DOUBLE_EQ(run->cost("my").params, 20);
}

TEST(QuantizationProducts, QLinearMatMul) {
  ModelBuilder b;
  b.input("a", kUint8, Shape{2, 5, 8});
  b.weight("bw", kInt8, {8, 6});
  scale_and_zero_point(b, "a", kUint8);
  scale_and_zero_point(b, "b", kInt8);
  scale_and_zero_point(b, "y", kUint8);
  b.node("QLinearMatMul", {"a", "a_scale", "a_zp", "bw", "b_scale", "b_zp", "y_scale", "y_zp"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 5, 6}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 60 * 8);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 960 + 3 * 60);
  EXPECT_DOUBLE_EQ(run->cost("y").params, 48 + 3);  // + 3 float scales
}

// ---- com.microsoft elementwise QLinear ops ----

TEST(QuantizationMicrosoft, ElementwiseQLinearOps) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kUint8, Shape{2, 3});
  b.input("B", kUint8, Shape{3});
  b.input("X", kUint8, Shape{4, 5});
  scale_and_zero_point(b, "a", kUint8);
  b.node("QLinearAdd", {"A", "a_scale", "a_zp", "B", "a_scale", "a_zp", "a_scale", "a_zp"}, {"add"}, kMs);
  b.node("QLinearMul", {"A", "a_scale", "a_zp", "B", "a_scale", "a_zp", "a_scale", "a_zp"}, {"mul"}, kMs);
  b.node("QLinearSigmoid", {"X", "a_scale", "a_zp", "a_scale", "a_zp"}, {"sig"}, kMs);
  b.node("QLinearLeakyRelu", {"X", "a_scale", "a_zp", "a_scale", "a_zp"}, {"leaky"}, kMs);
  auto& sm = b.node("QLinearSoftmax", {"X", "a_scale", "a_zp", "a_scale", "a_zp"}, {"soft"}, kMs);
  set_attr(sm, "opset", static_cast<int64_t>(13));
  b.output("add").output("mul").output("sig").output("leaky").output("soft");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("add"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("add").dtype, kUint8);
  EXPECT_DOUBLE_EQ(run->cost("add").flops, 8 * 6);  // 2 dequantizes (2 each), add, quantize (3)
  EXPECT_DOUBLE_EQ(run->cost("mul").flops, 8 * 6);
  EXPECT_EQ(run->shape("sig"), (Shape{4, 5}));
  EXPECT_DOUBLE_EQ(run->cost("sig").flops, 9 * 20);   // 2 + sigmoid 4 + 3
  EXPECT_DOUBLE_EQ(run->cost("leaky").flops, 7 * 20);  // 2 + 2 + 3
  EXPECT_DOUBLE_EQ(run->cost("soft").flops, 10 * 20);  // 2 + softmax 5 + 3
}

TEST(QuantizationMicrosoft, QLinearSoftmaxNeedsItsOpsetAttribute) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("X", kUint8, Shape{4, 5});
  scale_and_zero_point(b, "a", kUint8);
  b.node("QLinearSoftmax", {"X", "a_scale", "a_zp", "a_scale", "a_zp"}, {"soft"}, kMs);
  b.output("soft");
  expect_node_error(b, "soft", "attribute opset is required");
}

TEST(QuantizationMicrosoft, QLinearConcat) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kUint8, Shape{2, 3});
  b.input("B", kUint8, Shape{2, 5});
  scale_and_zero_point(b, "y", kUint8);
  auto& n = b.node("QLinearConcat", {"y_scale", "y_zp", "A", "y_scale", "y_zp", "B", "y_scale", "y_zp"}, {"Y"}, kMs);
  set_attr(n, "axis", static_cast<int64_t>(1));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 5 * 16);

  ModelBuilder bad;
  bad.opset(kMs, 1);
  bad.input("A", kUint8, Shape{2, 3});
  scale_and_zero_point(bad, "y", kUint8);
  auto& bn = bad.node("QLinearConcat", {"y_scale", "y_zp", "A", "y_scale"}, {"Y"}, kMs);
  set_attr(bn, "axis", static_cast<int64_t>(1));
  bad.output("Y");
  expect_node_error(bad, "Y", "triples");
}

TEST(QuantizationMicrosoft, QLinearPools) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("X", kUint8, Shape{1, 8, 4, 4});
  b.input("XL", kUint8, Shape{1, 4, 4, 8});
  b.input("P", kUint8, Shape{1, 2, 6, 6});
  scale_and_zero_point(b, "a", kUint8);
  b.node("QLinearGlobalAveragePool", {"X", "a_scale", "a_zp", "a_scale", "a_zp"}, {"g"}, kMs);
  auto& last = b.node("QLinearGlobalAveragePool", {"XL", "a_scale", "a_zp", "a_scale", "a_zp"}, {"gl"}, kMs);
  set_attr(last, "channels_last", static_cast<int64_t>(1));
  auto& pool = b.node("QLinearAveragePool", {"P", "a_scale", "a_zp", "a_scale", "a_zp"}, {"p"}, kMs);
  set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(pool, "strides", std::vector<int64_t>{2, 2});
  b.output("g").output("gl").output("p");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("g"), (Shape{1, 8, 1, 1}));
  EXPECT_EQ(run->shape("gl"), (Shape{1, 1, 1, 8}));
  EXPECT_DOUBLE_EQ(run->cost("g").flops, 3 * 128 + 4 * 8);  // dequantize + sum; divide + quantize
  EXPECT_EQ(run->shape("p"), (Shape{1, 2, 3, 3}));
  EXPECT_DOUBLE_EQ(run->cost("p").flops, 2 * 72 + 18 * (4 + 1 + 3));
}

TEST(QuantizationMicrosoft, QGemmFloatAndQuantizedOutput) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kUint8, Shape{4, 8});
  b.weight("B", kInt8, {6, 8});
  scale_and_zero_point(b, "a", kUint8);
  scale_and_zero_point(b, "b", kInt8);
  scale_and_zero_point(b, "y", kUint8);
  auto& f = b.node("QGemm", {"A", "a_scale", "a_zp", "B", "b_scale", "b_zp"}, {"F"}, kMs);
  set_attr(f, "transB", static_cast<int64_t>(1));
  auto& q = b.node("QGemm", {"A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "", "y_scale", "y_zp"}, {"Q"}, kMs);
  set_attr(q, "transB", static_cast<int64_t>(1));
  b.output("F").output("Q");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("F"), (Shape{4, 6}));
  EXPECT_EQ(run->tensor("F").dtype, kFloat);
  EXPECT_EQ(run->tensor("Q").dtype, kUint8);
  EXPECT_DOUBLE_EQ(run->cost("F").macs, 192);
  EXPECT_DOUBLE_EQ(run->cost("F").flops, 384 + 24);
  EXPECT_DOUBLE_EQ(run->cost("Q").flops, 384 + 24 * 4);
  EXPECT_DOUBLE_EQ(run->cost("F").params, 48 + 2);  // + 2 float scales
}

TEST(QuantizationMicrosoft, DynamicQuantizeMatMulAndMatMulIntegerToFloat) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kFloat, Shape{3, 8});
  b.input("Aq", kUint8, Shape{3, 8});
  b.weight("B", kInt8, {8, 4});
  b.weight("bias", kFloat, {4});
  b.floats("s", {0.1f}, {});
  b.node("DynamicQuantizeMatMul", {"A", "B", "s", "", "bias"}, {"D"}, kMs);
  b.node("MatMulIntegerToFloat", {"Aq", "B", "s", "s"}, {"M"}, kMs);
  b.output("D").output("M");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("D"), (Shape{3, 4}));
  EXPECT_EQ(run->tensor("D").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("D").macs, 96);
  EXPECT_DOUBLE_EQ(run->cost("D").flops, 5 * 24 + 192 + 2 * 12);  // quantize A, product, rescale, bias
  EXPECT_DOUBLE_EQ(run->cost("D").params, 32 + 4 + 1);  // weight, bias, scale
  EXPECT_EQ(run->shape("M"), (Shape{3, 4}));
  EXPECT_EQ(run->tensor("M").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("M").flops, 192 + 12);
}

// MatMulNBits: A [2, 5, 64] x 4-bit B (N 32, K 64, blocks of 32) -> [2, 5, 32].
ModelBuilder matmul_nbits(int64_t block_size, const Shape& packed, int64_t k_of_a) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kFloat, Shape{2, 5, k_of_a});
  b.weight("B", kUint8, packed);
  b.weight("scales", kFloat, {32, 2});
  auto& n = b.node("MatMulNBits", {"A", "B", "scales"}, {"Y"}, kMs);
  set_attr(n, "K", static_cast<int64_t>(64));
  set_attr(n, "N", static_cast<int64_t>(32));
  set_attr(n, "bits", static_cast<int64_t>(4));
  set_attr(n, "block_size", block_size);
  b.output("Y");
  return b;
}

TEST(QuantizationMicrosoft, MatMulNBitsCountsLogicalWeights) {
  auto run = analyse(matmul_nbits(32, {32, 2, 16}, 64));
  EXPECT_EQ(run->shape("Y"), (Shape{2, 5, 32}));
  const NodeCost& c = run->cost("Y");
  EXPECT_DOUBLE_EQ(c.macs, 10 * 32 * 64);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 20480 + 2 * 2048);  // product + dequantize each weight once
  EXPECT_DOUBLE_EQ(c.params, 64 * 32 + 64);         // K x N logical weights + float scales
  EXPECT_DOUBLE_EQ(run->analysis.totals.params, 64 * 32 + 64);
}

TEST(QuantizationMicrosoft, MatMulNBitsRejectsInconsistentAttributes) {
  expect_node_error(matmul_nbits(24, {32, 2, 16}, 64), "Y", "block_size = 24 is not a power of two");
  expect_node_error(matmul_nbits(32, {32, 2, 15}, 64), "Y", "packed B [32,2,15]");
  expect_node_error(matmul_nbits(32, {32, 2, 16}, 60), "Y", "does not end in K = 64");
}

TEST(QuantizationMicrosoft, MatMulBnb4) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("A", kFloat, Shape{2, 64});
  b.weight("B", kUint8, {1024});
  b.weight("absmax", kFloat, {32});
  auto& n = b.node("MatMulBnb4", {"A", "B", "absmax"}, {"Y"}, kMs);
  set_attr(n, "K", static_cast<int64_t>(64));
  set_attr(n, "N", static_cast<int64_t>(32));
  set_attr(n, "block_size", static_cast<int64_t>(64));
  set_attr(n, "quant_type", static_cast<int64_t>(1));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 32}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 2 * 2048);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * 4096 + 2048);  // + one scaled lookup per weight
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 2048 + 32);
}

TEST(QuantizationMicrosoft, QAttentionProjectsAndAttends) {
  ModelBuilder b;
  b.opset(kMs, 1);
  b.input("x", kUint8, Shape{2, 4, 16});
  b.weight("w", kInt8, {16, 48});
  b.weight("bias", kFloat, {48});
  b.floats("s", {0.1f}, {});
  auto& n = b.node("QAttention", {"x", "w", "bias", "s", "s"}, {"Y", "present"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y").output("present");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 4, 16}));
  EXPECT_EQ(run->tensor("Y").dtype, kFloat);
  EXPECT_EQ(run->shape("present"), (Shape{2, 2, 4, 4, 4}));
  const NodeCost& c = run->cost("Y");
  const double projection = 2 * 4 * 16 * 48, scores = 2 * 4 * 4 * 4;
  EXPECT_DOUBLE_EQ(c.macs, projection + scores * (4 + 4));
  // 2 macs + rescale and bias per projected value + scale and softmax per score.
  EXPECT_DOUBLE_EQ(c.flops, 2 * (projection + scores * 8) + 2 * (2 * 4 * 48) + scores * 6);
  EXPECT_DOUBLE_EQ(c.params, 16 * 48 + 48 + 1);  // weight, bias, the scale read twice counts once
}

}  // namespace
}  // namespace modelcost::testing
