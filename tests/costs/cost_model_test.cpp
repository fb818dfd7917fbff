#include "costs/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace modelcost::testing {

TEST(CostModel, SharedWeightCountsOncePerTotalButInEveryNode) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 4});
  b.weight("w", kFloat, {4, 4});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("MatMul", {"h", "w"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->cost("h").params, 16);
  EXPECT_EQ(run->cost("y").params, 16);
  EXPECT_EQ(run->analysis.totals.params, 16);
  EXPECT_EQ(run->analysis.totals.macs, 2 * (2 * 4 * 4));
}

TEST(CostModel, BytesAtEachTensorsDtype) {
  ModelBuilder b;
  b.input("x", kFloat16, Shape{8, 16});
  b.weight("w", kFloat16, {16, 32});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  const NodeCost& c = run->cost("y");
  EXPECT_EQ(c.bytes_read, 2.0 * (8 * 16 + 16 * 32));
  EXPECT_EQ(c.bytes_written, 2.0 * 8 * 32);
  EXPECT_EQ(c.macs, 8.0 * 32 * 16);
  EXPECT_EQ(c.flops, 2 * c.macs);
  EXPECT_DOUBLE_EQ(c.arithmetic_intensity(), c.flops / (c.bytes_read + c.bytes_written));
}

TEST(CostModel, ReinterpretingOpsMoveNoBytes) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  b.ints("shape", {6, 4});
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Identity", {"r"}, {"i"});
  b.node("Flatten", {"i"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  for (const char* n : {"r", "i", "y"}) {
    EXPECT_EQ(run->cost(n).bytes_read, 0) << n;
    EXPECT_EQ(run->cost(n).bytes_written, 0) << n;
    EXPECT_TRUE(run->cost(n).known) << n;
  }
}

TEST(CostModel, IntegerInitializersAreNotParams) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  b.ints("shape", {3, 2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  EXPECT_EQ(analyse(b)->analysis.totals.params, 0);
}

TEST(CostModel, HugeMatMulNeverWraps) {
  auto run = analyse(huge_matmul_model());
  EXPECT_EQ(run->cost("y").macs, std::ldexp(1.0, 93));
  EXPECT_GT(run->analysis.totals.flops, 0);
  EXPECT_EQ(run->analysis.totals.params, std::ldexp(1.0, 62));
}

}  // namespace modelcost::testing
