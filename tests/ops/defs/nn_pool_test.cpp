// Pool rules of the nn family: AveragePool, MaxPool, LpPool, the global pools, MaxUnpool.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

namespace {
onnx::NodeProto& pool(ModelBuilder& b, const std::string& op, const std::string& in, const std::string& out,
                      std::vector<int64_t> kernel, std::vector<int64_t> strides, std::vector<int64_t> pads = {}) {
  auto& n = b.node(op, {in}, {out});
  set_attr(n, "kernel_shape", kernel);
  set_attr(n, "strides", strides);
  if (!pads.empty()) set_attr(n, "pads", pads);
  return n;
}
}  // namespace

TEST(NnPool, ResNetMaxPoolWithIndices) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 64, 112, 112});
  auto& n = pool(b, "MaxPool", "x", "y", {3, 3}, {2, 2}, {1, 1, 1, 1});
  n.add_output("indices");
  b.output("y").output("indices");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 64, 56, 56}));
  EXPECT_EQ(run->shape("indices"), (Shape{1, 64, 56, 56}));
  EXPECT_EQ(run->tensor("indices").dtype, kInt64);
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 0);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 64.0 * 56 * 56 * 9);  // one comparison per window element
}

TEST(NnPool, CeilModeAddsAWindowUnlessItStartsInPadding) {
  ModelBuilder b;
  b.input("x6", kFloat, Shape{1, 1, 6, 6}).input("x3", kFloat, Shape{1, 1, 3, 3});
  set_attr(pool(b, "AveragePool", "x6", "ceil", {3, 3}, {2, 2}), "ceil_mode", int64_t{1});
  pool(b, "AveragePool", "x6", "floor", {3, 3}, {2, 2});
  // ceil((3+2-2)/2)+1 = 3 windows, but the third would start in the end padding: dropped.
  set_attr(pool(b, "MaxPool", "x3", "dropped", {2, 2}, {2, 2}, {1, 1, 1, 1}), "ceil_mode", int64_t{1});
  b.output("ceil").output("floor").output("dropped");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("ceil"), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(run->shape("floor"), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(run->shape("dropped"), (Shape{1, 1, 2, 2}));
  EXPECT_DOUBLE_EQ(run->cost("ceil").flops, 9 * 9);  // (k-1) adds + 1 divide per output
  EXPECT_DOUBLE_EQ(run->cost("floor").flops, 4 * 9);
}

TEST(NnPool, DilatedAndSamePaddedPools) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2, 9, 9}).input("x1d", kFloat, Shape{1, 2, 7});
  set_attr(pool(b, "MaxPool", "x", "dilated", {3, 3}, {1, 1}), "dilations", std::vector<int64_t>{2, 2});
  set_attr(pool(b, "AveragePool", "x1d", "same", {3}, {2}), "auto_pad", std::string("SAME_UPPER"));
  b.output("dilated").output("same");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("dilated"), (Shape{1, 2, 5, 5}));  // extent 5: 9 - 5 + 1
  EXPECT_EQ(run->shape("same"), (Shape{1, 2, 4}));        // ceil(7 / 2)
  EXPECT_DOUBLE_EQ(run->cost("dilated").flops, 50 * 9);
  EXPECT_DOUBLE_EQ(run->cost("same").flops, 8 * 3);
}

TEST(NnPool, LpPoolCountsPowerAddAndRoot) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2, 4, 4});
  set_attr(pool(b, "LpPool", "x", "y", {2, 2}, {2, 2}), "p", int64_t{2});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 2, 2, 2}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 8 * (2 * 4 + 1));
}

TEST(NnPool, IntegerMaxPoolDoesNoFloatWork) {
  ModelBuilder b;
  b.input("x", kUint8, Shape{1, 1, 4, 4});
  pool(b, "MaxPool", "x", "y", {2, 2}, {2, 2});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->tensor("y").dtype, kUint8);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("y").bytes_read, 16);
}

TEST(NnPool, GlobalPools) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2048, 7, 7}).input("small", kFloat, Shape{1, 2, 3, 3});
  b.node("GlobalAveragePool", {"x"}, {"avg"});
  b.node("GlobalMaxPool", {"x"}, {"max"});
  b.node("GlobalLpPool", {"small"}, {"lp"});
  b.output("avg").output("max").output("lp");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("avg"), (Shape{1, 2048, 1, 1}));
  EXPECT_EQ(run->shape("lp"), (Shape{1, 2, 1, 1}));
  EXPECT_DOUBLE_EQ(run->cost("avg").flops, 2048 * 49);
  EXPECT_DOUBLE_EQ(run->cost("max").flops, 2048 * 49);
  EXPECT_DOUBLE_EQ(run->cost("lp").flops, 2 * 18 + 2);
}

TEST(NnPool, MaxUnpoolDefaultAndGivenOutputShape) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 2, 2}).input("i", kInt64, Shape{1, 1, 2, 2}).ints("shape", {1, 1, 5, 5});
  auto& plain = b.node("MaxUnpool", {"x", "i"}, {"plain"});
  set_attr(plain, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(plain, "strides", std::vector<int64_t>{2, 2});
  auto& given = b.node("MaxUnpool", {"x", "i", "shape"}, {"given"});
  set_attr(given, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(given, "strides", std::vector<int64_t>{2, 2});
  b.output("plain").output("given");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("plain"), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(run->shape("given"), (Shape{1, 1, 5, 5}));
  EXPECT_DOUBLE_EQ(run->cost("plain").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("plain").bytes_written, 64);
}

TEST(NnPool, RejectsMissingKernelShape) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 4, 4});
  b.node("MaxPool", {"x"}, {"bad_pool"});
  b.output("bad_pool");
  expect_node_error(b, "bad_pool", "kernel_shape attribute is required");
}

TEST(NnPool, RejectsKernelLargerThanInput) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 4, 4});
  pool(b, "AveragePool", "x", "bad_pool", {5, 5}, {1, 1});
  b.output("bad_pool");
  expect_node_error(b, "bad_pool", "larger than the padded input");
}

TEST(NnPool, RejectsPadsOfWrongLengthAndZeroStride) {
  ModelBuilder pads;
  pads.input("x", kFloat, Shape{1, 1, 4, 4});
  pool(pads, "MaxPool", "x", "bad_pads", {2, 2}, {1, 1}, {1, 1});
  pads.output("bad_pads");
  expect_node_error(pads, "bad_pads", "pads has 2 values, expected 4");
  ModelBuilder stride;
  stride.input("x", kFloat, Shape{1, 1, 4, 4});
  pool(stride, "MaxPool", "x", "bad_stride", {2, 2}, {0, 1});
  stride.output("bad_stride");
  expect_node_error(stride, "bad_stride", "strides must be positive");
}

TEST(NnPool, RejectsUnknownAutoPad) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 4, 4});
  set_attr(pool(b, "MaxPool", "x", "bad_pool", {2, 2}, {1, 1}), "auto_pad", std::string("SAME"));
  b.output("bad_pool");
  expect_node_error(b, "bad_pool", "unknown auto_pad");
}

}  // namespace modelcost::testing
