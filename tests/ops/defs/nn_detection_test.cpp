// Detection and sampling rules of the nn family: NonMaxSuppression, RoiAlign, MaxRoiPool,
// GridSample, AffineGrid.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(NnDetection, NmsUpperBoundFromMaxOutputBoxes) {
  ModelBuilder b;
  b.input("boxes", kFloat, Shape{1, 100, 4}).input("scores", kFloat, Shape{1, 3, 100});
  b.ints("max_out", {10}, {});
  b.input("limit", kInt64, Shape{1});
  b.node("NonMaxSuppression", {"boxes", "scores", "max_out"}, {"limited"});
  b.node("NonMaxSuppression", {"boxes", "scores"}, {"none"});
  b.node("NonMaxSuppression", {"boxes", "scores", "limit"}, {"unknown"});
  b.output("limited").output("none").output("unknown");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("limited"), (Shape{30, 3}));  // batches x classes x min(boxes, 10)
  EXPECT_EQ(run->tensor("limited").dtype, kInt64);
  EXPECT_TRUE(run->tensor("limited").estimate);
  EXPECT_TRUE(run->cost("limited").estimate);
  // Per class: 100 threshold compares + 100*ceil(log2 100) sort compares + 12 flops per IoU of
  // each of the 10 kept boxes with the boxes ranked below it (99 + 98 + ... + 90 = 945 pairs).
  EXPECT_DOUBLE_EQ(run->cost("limited").flops, 3 * (100 + 700 + 12 * 945));
  // The limit defaults to 0 when absent: nothing is selected, exactly.
  EXPECT_EQ(run->shape("none"), (Shape{0, 3}));
  EXPECT_FALSE(run->tensor("none").estimate);
  EXPECT_EQ(run->shape("unknown"), (Shape{300, 3}));  // limit unknown: every box
  EXPECT_TRUE(run->tensor("unknown").estimate);
}

TEST(NnDetection, NmsRejectsMismatchedScores) {
  ModelBuilder b;
  b.input("boxes", kFloat, Shape{1, 100, 4}).input("scores", kFloat, Shape{1, 3, 90});
  b.node("NonMaxSuppression", {"boxes", "scores"}, {"bad_nms"});
  b.output("bad_nms");
  expect_node_error(b, "bad_nms", "do not match boxes");
}

TEST(NnDetection, RoiAlignFixedAndAdaptiveSampling) {
  ModelBuilder b(16);
  b.input("x", kFloat, Shape{1, 4, 10, 10}).input("rois", kFloat, Shape{3, 4}).input("idx", kInt64, Shape{3});
  auto& fixed = b.node("RoiAlign", {"x", "rois", "idx"}, {"fixed"});
  set_attr(fixed, "output_height", int64_t{2});
  set_attr(fixed, "output_width", int64_t{2});
  set_attr(fixed, "sampling_ratio", int64_t{2});
  auto& adaptive = b.node("RoiAlign", {"x", "rois", "idx"}, {"adaptive"});
  set_attr(adaptive, "output_height", int64_t{2});
  set_attr(adaptive, "output_width", int64_t{2});
  set_attr(adaptive, "mode", std::string("max"));
  b.output("fixed").output("adaptive");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("fixed"), (Shape{3, 4, 2, 2}));
  // 48 outputs x (4 samples x (7 bilinear + 1 accumulate) + 1 divide).
  EXPECT_DOUBLE_EQ(run->cost("fixed").flops, 48 * 33);
  EXPECT_FALSE(run->cost("fixed").estimate);
  // Adaptive: bounded by a whole-map ROI, ceil(10/2)^2 = 25 samples per bin; max mode, no divide.
  EXPECT_DOUBLE_EQ(run->cost("adaptive").flops, 48 * 25 * 8);
  EXPECT_TRUE(run->cost("adaptive").estimate);
}

TEST(NnDetection, RoiAlignRejectsBadMode) {
  ModelBuilder b(16);
  b.input("x", kFloat, Shape{1, 4, 10, 10}).input("rois", kFloat, Shape{3, 4}).input("idx", kInt64, Shape{3});
  set_attr(b.node("RoiAlign", {"x", "rois", "idx"}, {"bad_roi"}), "mode", std::string("median"));
  b.output("bad_roi");
  expect_node_error(b, "bad_roi", "mode must be avg or max");
}

TEST(NnDetection, MaxRoiPool) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 10, 10}).input("rois", kFloat, Shape{3, 5});
  set_attr(b.node("MaxRoiPool", {"x", "rois"}, {"y"}), "pooled_shape", std::vector<int64_t>{2, 2});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{3, 4, 2, 2}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 3 * 400);  // bound: each ROI compares the whole map once
  EXPECT_TRUE(run->cost("y").estimate);
}

TEST(NnDetection, GridSampleModes) {
  ModelBuilder b(20);
  b.input("x", kFloat, Shape{1, 3, 8, 8}).input("grid", kFloat, Shape{1, 4, 5, 2});
  b.input("vol", kFloat, Shape{1, 2, 4, 4, 4}).input("grid3", kFloat, Shape{1, 3, 3, 3, 3});
  b.node("GridSample", {"x", "grid"}, {"linear"});
  set_attr(b.node("GridSample", {"x", "grid"}, {"nearest"}), "mode", std::string("nearest"));
  set_attr(b.node("GridSample", {"x", "grid"}, {"cubic"}), "mode", std::string("cubic"));
  b.node("GridSample", {"vol", "grid3"}, {"trilinear"});
  b.output("linear").output("nearest").output("cubic").output("trilinear");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("linear"), (Shape{1, 3, 4, 5}));
  EXPECT_EQ(run->shape("trilinear"), (Shape{1, 2, 3, 3, 3}));
  EXPECT_DOUBLE_EQ(run->cost("linear").flops, 60 * 7);  // 4 taps: 4 multiplies + 3 adds
  EXPECT_DOUBLE_EQ(run->cost("nearest").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("cubic").flops, 60 * 31);  // 16 taps
  EXPECT_DOUBLE_EQ(run->cost("trilinear").flops, 54 * 15);
}

TEST(NnDetection, GridSampleRejectsGridOfWrongRank) {
  ModelBuilder b(16);
  b.input("x", kFloat, Shape{1, 3, 8, 8}).input("grid", kFloat, Shape{1, 4, 5, 3});
  b.node("GridSample", {"x", "grid"}, {"bad_grid"});
  b.output("bad_grid");
  expect_node_error(b, "bad_grid", "grid [1,4,5,3]");
}

TEST(NnDetection, AffineGrid) {
  ModelBuilder b(20);
  b.input("theta", kFloat, Shape{2, 2, 3}).ints("size", {2, 3, 4, 5});
  b.node("AffineGrid", {"theta", "size"}, {"grid"});
  b.output("grid");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("grid"), (Shape{2, 4, 5, 2}));
  EXPECT_DOUBLE_EQ(run->cost("grid").flops, 40 * 2 * 4);  // 40 points, 2 coordinates of 2 mul + 2 add
}

TEST(NnDetection, AffineGridRejectsThetaOfWrongShape) {
  ModelBuilder b(20);
  b.input("theta", kFloat, Shape{2, 3, 4}).ints("size", {2, 3, 4, 5});
  b.node("AffineGrid", {"theta", "size"}, {"bad_affine"});
  b.output("bad_affine");
  expect_node_error(b, "bad_affine", "theta [2,3,4] must be [2,2,3]");
}

}  // namespace modelcost::testing
