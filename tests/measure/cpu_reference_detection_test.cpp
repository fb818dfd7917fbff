// Hand-computed cases for the CPU reference of the detection kinds: RoiAlign (both coordinate
// modes, avg and max), NonZero padded to the analyzer's bound, NonMaxSuppression (ONNX's
// documented suppress-by-IoU example) and the If plan's choice of branch.
#include <gtest/gtest.h>

#include "cpu_reference_run.h"
#include "measure/cpu_reference.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

std::vector<float> iota_map() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST(MeasureCpuReferenceDetection, RoiAlignCoordinateModesAndMax) {
  ModelBuilder b(16);
  b.input("x", kFloat, Shape{1, 1, 4, 4}).input("rois", kFloat, Shape{1, 4}).input("batch", kInt64, Shape{1});
  for (const char* name : {"output_half", "half", "max"}) {
    auto& n = b.node("RoiAlign", {"x", "rois", "batch"}, {name});
    set_attr(n, "output_height", int64_t{1});
    set_attr(n, "output_width", int64_t{1});
    set_attr(n, "sampling_ratio", int64_t{1});
    set_attr(n, "coordinate_transformation_mode", std::string(name == std::string("half") ? "half_pixel" : "output_half_pixel"));
    if (name == std::string("max")) set_attr(n, "mode", std::string("max"));
    b.output(name);
  }
  auto run = analyse(b);
  const std::vector<float> roi = {0, 0, 3, 3}, batch = {0};
  // One sample at the ROI's centre, (1.5, 1.5): the mean of 5, 6, 9 and 10.
  EXPECT_FLOAT_EQ(run_planned_reference(*run, "output_half", {iota_map(), roi, batch})[0], 7.5f);
  // half_pixel shifts the ROI by half a pixel: the sample lands on (1, 1).
  EXPECT_FLOAT_EQ(run_planned_reference(*run, "half", {iota_map(), roi, batch})[0], 5.f);
  // max: the largest of the four weighted corners, 0.25 * 10.
  EXPECT_FLOAT_EQ(run_planned_reference(*run, "max", {iota_map(), roi, batch})[0], 2.5f);
}

TEST(MeasureCpuReferenceDetection, RoiAlignAdaptiveSamplingAtOpset10) {
  ModelBuilder b(10);
  b.input("x", kFloat, Shape{1, 1, 4, 4}).input("rois", kFloat, Shape{1, 4}).input("batch", kInt64, Shape{1});
  auto& n = b.node("RoiAlign", {"x", "rois", "batch"}, {"y"});
  set_attr(n, "output_height", int64_t{1});
  set_attr(n, "output_width", int64_t{1});
  b.output("y");
  auto run = analyse(b);
  // sampling_ratio 0 over a 2x2 ROI: 2x2 samples at 0.5 and 1.5: the map's mean over [0,2)^2 rows.
  const float expected = (2.5f + 3.5f + 6.5f + 7.5f) / 4;  // bilinear at (0.5,0.5), (0.5,1.5), (1.5,0.5), (1.5,1.5)
  EXPECT_FLOAT_EQ(run_planned_reference(*run, "y", {iota_map(), {0, 0, 2, 2}, {0}})[0], expected);
}

TEST(MeasureCpuReferenceDetection, NonZeroFillsTheBoundWithZeros) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 2});
  b.node("NonZero", {"x"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->node("y").node->op_type, "NonZero");
  // Non-zero (0, 1) and (1, 0); the bound is 4 columns.
  EXPECT_EQ(run_planned_reference(*run, "y", {{0, 3, -2, 0}}), (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
}

TEST(MeasureCpuReferenceDetection, NonMaxSuppressionSuppressesByIou) {
  ModelBuilder b(11);
  b.input("boxes", kFloat, Shape{1, 6, 4}).input("scores", kFloat, Shape{1, 1, 6});
  b.ints("max", {3}, Shape{1}).floats("iou", {0.5f}, Shape{1}).floats("score", {0.f}, Shape{1});
  b.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"selected"});
  b.output("selected");
  auto run = analyse(b);
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                    0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
  const std::vector<float> scores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};
  EXPECT_EQ(run_planned_reference(*run, "selected", {boxes, scores}), (std::vector<float>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

}  // namespace modelcost::testing
