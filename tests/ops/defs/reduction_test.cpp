// Reduction family: ReduceX (axes as attribute or input, keepdims, noop_with_empty_axes),
// ArgMax/ArgMin, and folding of small known inputs.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(ReductionShape, AxesAttributeBeforeOpset18) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3, 4});
  auto& mean = b.node("ReduceMean", {"x"}, {"mean"});
  set_attr(mean, "axes", std::vector<int64_t>{1, -1});
  set_attr(mean, "keepdims", int64_t{0});
  b.node("ReduceMax", {"x"}, {"all"});  // no axes: every axis, keepdims 1
  b.output("mean").output("all");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("mean"), (Shape{2}));
  EXPECT_EQ(run->shape("all"), (Shape{1, 1, 1}));
  EXPECT_DOUBLE_EQ(run->cost("mean").flops, 24 + 2);  // an add per input, a divide per output
  EXPECT_DOUBLE_EQ(run->cost("all").flops, 24);
}

TEST(ReductionShape, AxesInputFromOpset18AndReduceSum13) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{2, 3, 4}).ints("last", {-1}).ints("middle", {1});
  b.node("ReduceMean", {"x", "last"}, {"mean"});
  b.node("ReduceSum", {"x", "middle"}, {"sum"});
  b.node("ReduceL2", {"x"}, {"l2_all"});
  b.output("mean").output("sum").output("l2_all");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("mean"), (Shape{2, 3, 1}));
  EXPECT_EQ(run->shape("sum"), (Shape{2, 1, 4}));
  EXPECT_EQ(run->shape("l2_all"), (Shape{1, 1, 1}));
  ModelBuilder b13(13);
  b13.input("x", kFloat, Shape{2, 3, 4}).ints("middle", {1});
  b13.node("ReduceSum", {"x", "middle"}, {"sum"});
  b13.output("sum");
  EXPECT_EQ(analyse(b13)->shape("sum"), (Shape{2, 1, 4}));
}

TEST(ReductionShape, NoopWithEmptyAxesIsAnIdentity) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4});
  set_attr(b.node("ReduceSum", {"x"}, {"same"}), "noop_with_empty_axes", int64_t{1});
  b.node("ReduceSum", {"x"}, {"all"});
  b.output("same").output("all");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("same"), (Shape{2, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("same").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("same").bytes(), 0);
  EXPECT_EQ(run->shape("all"), (Shape{1, 1, 1}));
  EXPECT_DOUBLE_EQ(run->cost("all").flops, 24);
}

TEST(ReductionCost, FlopsPerInputAndOutputElement) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3, 4});
  const char* ops[] = {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd",
                       "ReduceMin"};
  for (const char* op : ops) {
    auto& n = b.node(op, {"x"}, {op});
    set_attr(n, "axes", std::vector<int64_t>{2});
    set_attr(n, "keepdims", int64_t{0});
    b.output(op);
  }
  auto run = analyse(b);
  const double n = 24, m = 6;
  EXPECT_EQ(run->shape("ReduceL1"), (Shape{2, 3}));
  EXPECT_DOUBLE_EQ(run->cost("ReduceL1").flops, 2 * n);            // abs, add
  EXPECT_DOUBLE_EQ(run->cost("ReduceL2").flops, 2 * n + m);        // square, add; sqrt
  EXPECT_DOUBLE_EQ(run->cost("ReduceSumSquare").flops, 2 * n);     // square, add
  EXPECT_DOUBLE_EQ(run->cost("ReduceLogSum").flops, n + m);        // add; log
  EXPECT_DOUBLE_EQ(run->cost("ReduceLogSumExp").flops, 4 * n + 2 * m);  // max, sub, exp, add; log, add max
  EXPECT_DOUBLE_EQ(run->cost("ReduceProd").flops, n);
  EXPECT_DOUBLE_EQ(run->cost("ReduceMin").flops, n);
}

TEST(ReductionArg, ArgMaxArgMin) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  auto& amax = b.node("ArgMax", {"x"}, {"amax"});
  set_attr(amax, "axis", int64_t{1});
  set_attr(amax, "keepdims", int64_t{0});
  auto& amin = b.node("ArgMin", {"x"}, {"amin"});
  set_attr(amin, "axis", int64_t{-1});
  set_attr(amin, "select_last_index", int64_t{1});
  b.output("amax").output("amin");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("amax"), (Shape{2, 4}));
  EXPECT_EQ(run->tensor("amax").dtype, kInt64);
  EXPECT_EQ(run->shape("amin"), (Shape{2, 3, 1}));  // axis 0 is the default, keepdims 1
  EXPECT_DOUBLE_EQ(run->cost("amax").flops, 24);
  EXPECT_DOUBLE_EQ(run->cost("amin").flops, 24);
}

TEST(ReductionFold, ShapeComputationsFold) {
  ModelBuilder b(13);
  b.ints("dims", {2, 3, 4}).ints("matrix", {1, 2, 3, 4, 5, 6}, {2, 3}).ints("axis1", {1});
  b.floats("f", {1.5f, -2.0f, 3.0f});
  set_attr(b.node("ReduceProd", {"dims"}, {"count"}), "keepdims", int64_t{0});
  set_attr(b.node("ReduceSum", {"matrix", "axis1"}, {"row_sums"}), "keepdims", int64_t{0});
  b.node("ReduceMax", {"f"}, {"max"});
  b.node("ReduceMin", {"f"}, {"min"});
  set_attr(b.node("ReduceMean", {"matrix"}, {"col_means"}), "axes", std::vector<int64_t>{0});
  b.output("count").output("row_sums").output("max").output("min").output("col_means");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("count"), (Shape{}));
  ASSERT_TRUE(run->tensor("count").value);
  EXPECT_EQ(run->tensor("count").value->ints, (std::vector<int64_t>{24}));
  EXPECT_DOUBLE_EQ(run->cost("count").flops, 0);  // integer work is not floating-point
  ASSERT_TRUE(run->tensor("row_sums").value);
  EXPECT_EQ(run->tensor("row_sums").value->ints, (std::vector<int64_t>{6, 15}));
  ASSERT_TRUE(run->tensor("max").value);
  EXPECT_EQ(run->tensor("max").value->floats, (std::vector<double>{3.0}));
  ASSERT_TRUE(run->tensor("min").value);
  EXPECT_EQ(run->tensor("min").value->floats, (std::vector<double>{-2.0}));
  EXPECT_EQ(run->shape("col_means"), (Shape{1, 3}));
  ASSERT_TRUE(run->tensor("col_means").value);
  EXPECT_EQ(run->tensor("col_means").value->ints, (std::vector<int64_t>{2, 3, 4}));  // (1+4)/2 truncated
}

TEST(ReductionErrors, AxisOutOfRange) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4}).ints("axes", {3});
  b.node("ReduceSum", {"x", "axes"}, {"bad_sum"});
  b.output("bad_sum");
  expect_node_error(b, "bad_sum", "axis 3 is out of range for rank 3");
}

TEST(ReductionErrors, DuplicateAxes) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3, 4});
  set_attr(b.node("ReduceMax", {"x"}, {"bad_max"}), "axes", std::vector<int64_t>{1, -2});
  b.output("bad_max");
  expect_node_error(b, "bad_max", "listed twice");
}

TEST(ReductionErrors, ArgMaxSelectLastIndexOutOfRange) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  set_attr(b.node("ArgMax", {"x"}, {"bad_arg"}), "select_last_index", int64_t{2});
  b.output("bad_arg");
  expect_node_error(b, "bad_arg", "select_last_index must be 0 or 1");
}

}  // namespace modelcost::testing
