// ORT's NCHWc ops: reorders, Conv and pools on the block-padded channel count.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(Nchwc, ReorderConvPoolReorderChain) {
  const std::string d = "com.microsoft.nchwc";
  ModelBuilder b;
  b.opset(d, 1);
  b.input("x", kFloat, Shape{1, 10, 16, 16});
  b.weight("w", kFloat, {16, 16, 3, 3});  // 10 input channels padded to 16
  b.weight("bias", kFloat, {16});
  b.node("ReorderInput", {"x"}, {"xb"}, d);
  auto& conv = b.node("Conv", {"xb", "w", "bias"}, {"c"}, d);
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "activation", std::string("Relu"));
  auto& pool = b.node("MaxPool", {"c"}, {"p"}, d);
  set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(pool, "strides", std::vector<int64_t>{2, 2});
  b.node("GlobalAveragePool", {"p"}, {"g"}, d);
  auto& out = b.node("ReorderOutput", {"g"}, {"y"}, d);
  set_attr(out, "channels", int64_t{12});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("xb"), (Shape{1, 16, 16, 16}));
  EXPECT_EQ(run->shape("p"), (Shape{1, 16, 8, 8}));
  EXPECT_EQ(run->shape("y"), (Shape{1, 12, 1, 1}));
  EXPECT_DOUBLE_EQ(run->cost("c").macs, 16.0 * 16 * 16 * 16 * 9);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 0u);
}

TEST(Nchwc, ReorderInputWithoutAConvConsumerPadsToTheDefaultBlock) {
  ModelBuilder b;
  b.opset("com.microsoft.nchwc", 1);
  b.input("x", kFloat, Shape{1, 10, 4, 4});
  auto& n = b.node("Upsample", {"x"}, {"u"}, "com.microsoft.nchwc");
  set_attr(n, "scales", std::vector<int64_t>{1, 1, 2, 2});
  set_attr(n, "mode", std::string("linear"));
  b.node("ReorderInput", {"u"}, {"y"}, "com.microsoft.nchwc");
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("u"), (Shape{1, 10, 8, 8}));
  EXPECT_DOUBLE_EQ(run->cost("u").flops, 7 * 640);
  EXPECT_EQ(run->shape("y"), (Shape{1, 16, 8, 8}));
}

}  // namespace modelcost::testing
