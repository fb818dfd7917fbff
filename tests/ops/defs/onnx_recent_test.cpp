// Standard ops of opsets 23-26 that ONNX 1.12's schemas do not know.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(OnnxRecent, RmsNormalizationOverTheLastAxis) {
  ModelBuilder b(23);
  b.input("x", kFloat, Shape{2, 8, 16}).weight("scale", kFloat, {16});
  b.node("RMSNormalization", {"x", "scale"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 8, 16}));
  // 3 per element + 1 for the scale, 3 per row of 16.
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 256 * 4 + 16 * 3);
  EXPECT_DOUBLE_EQ(run->cost("y").params, 16);
}

TEST(OnnxRecent, RmsNormalizationAxisSetsTheRows) {
  ModelBuilder b(23);
  b.input("x", kFloat, Shape{2, 8, 16}).weight("scale", kFloat, {8, 16});
  auto& n = b.node("RMSNormalization", {"x", "scale"}, {"y"});
  set_attr(n, "axis", int64_t{1});
  b.output("y");
  EXPECT_DOUBLE_EQ(analyse(b)->cost("y").flops, 256 * 4 + 2 * 3);
}

TEST(OnnxRecent, SwishAndCumProdAreElementwise) {
  ModelBuilder b(24);
  b.input("x", kFloat, Shape{4, 5}).ints("axis", {1}, {});
  b.node("Swish", {"x"}, {"s"});
  b.node("CumProd", {"s", "axis"}, {"p"});
  b.output("p");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("p"), (Shape{4, 5}));
  EXPECT_DOUBLE_EQ(run->cost("s").flops, 20 * 6);
  EXPECT_DOUBLE_EQ(run->cost("p").flops, 20);
}

TEST(OnnxRecent, TensorScatterKeepsTheCacheShapeAndReadsOnlyTheUpdate) {
  ModelBuilder b(24);
  b.input("cache", kFloat, Shape{1, 4, 32, 8}).input("update", kFloat, Shape{1, 4, 1, 8});
  b.input("idx", kInt64, Shape{1});
  auto& n = b.node("TensorScatter", {"cache", "update", "idx"}, {"present"});
  set_attr(n, "axis", int64_t{-2});
  b.output("present");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("present"), (Shape{1, 4, 32, 8}));
  EXPECT_DOUBLE_EQ(run->cost("present").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("present").bytes_read, 32 * 4 + 8);
}

TEST(OnnxRecent, TensorScatterRejectsRankMismatch) {
  ModelBuilder b(24);
  b.input("cache", kFloat, Shape{1, 4, 32, 8}).input("update", kFloat, Shape{4, 1, 8});
  b.node("TensorScatter", {"cache", "update"}, {"bad_scatter"});
  b.output("bad_scatter");
  expect_node_error(b, "bad_scatter", "rank");
}

TEST(OnnxRecent, NewerOpsetWarnsAndUsesTheNearestRules) {
  ModelBuilder b(30);
  b.input("x", kFloat, Shape{2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 6);
  bool warned = false;
  for (const auto& w : run->analysis.warnings) warned = warned || w.find("newer than any known") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(OnnxRecent, NewerOpsetRefusesAnOpWithNoRuleNamingIt) {
  ModelBuilder b(30);
  b.input("x", kFloat, Shape{2, 3});
  b.node("FutureOp", {"x"}, {"y"});
  b.output("y");
  try {
    analyse(b);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnsupported);
    EXPECT_NE(std::string(e.what()).find("FutureOp"), std::string::npos) << e.what();
  }
}

}  // namespace modelcost::testing
