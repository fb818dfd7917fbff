// The detection kinds on the GPU against the CPU reference: RoiAlign (avg and max, both
// coordinate modes, fixed and adaptive sampling, several images), NonZero and NonMaxSuppression
// at the analyzer's output sizes; then a torchvision detection export (NonZero, If with
// NonMaxSuppression inside, RoiAlign) replayed as one CUDA graph.
#ifdef MODELCOST_HAVE_CUDA

#include "gpu_check.h"

namespace modelcost::testing {

TEST(MeasureGpuDetection, RoiAlignModesAndSampling) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(16);
  b.input("x", kFloat, Shape{2, 8, 12, 10}).input("rois", kFloat, Shape{5, 4}).input("batch", kInt64, Shape{5});
  const struct { const char* name; const char* mode; const char* coordinates; int64_t ratio; } cases[] = {
      {"avg_half", "avg", "half_pixel", 2}, {"avg_output_half", "avg", "output_half_pixel", 0},
      {"max_half", "max", "half_pixel", 0}, {"max_output_half", "max", "output_half_pixel", 2}};
  for (const auto& c : cases) {
    auto& n = b.node("RoiAlign", {"x", "rois", "batch"}, {c.name});
    set_attr(n, "mode", std::string(c.mode));
    set_attr(n, "coordinate_transformation_mode", std::string(c.coordinates));
    set_attr(n, "sampling_ratio", c.ratio);
    set_attr(n, "output_height", int64_t{3});
    set_attr(n, "output_width", int64_t{4});
    set_attr(n, "spatial_scale", 0.5f);
    b.output(c.name);
  }
  for (const auto& c : cases) check_both(b, c.name, 1e-5, 3e-3);
}

TEST(MeasureGpuDetection, NonZeroOfBoolsAndFloats) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("mask", kBool, Shape{3, 50}).input("x", kFloat, Shape{4, 5, 6});
  b.node("NonZero", {"mask"}, {"mask_nz"});
  b.node("NonZero", {"x"}, {"x_nz"});
  b.output("mask_nz").output("x_nz");
  check_both(b, "mask_nz", 1e-7, 1e-7);
  check_both(b, "x_nz", 1e-7, 1e-7);
}

TEST(MeasureGpuDetection, NonMaxSuppressionPerBatchAndClass) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(11);
  b.input("boxes", kFloat, Shape{2, 200, 4}).input("scores", kFloat, Shape{2, 3, 200});
  b.ints("max", {50}, Shape{1}).floats("iou", {0.5f}, Shape{1}).floats("score", {0.f}, Shape{1});
  b.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"selected"});
  b.node("NonMaxSuppression", {"boxes", "scores", "max", "iou"}, {"all_scores"});
  b.output("selected").output("all_scores");
  check_node(b, "selected", "fp32", 1e-7);
  check_node(b, "all_scores", "fp32", 1e-7);
}

TEST(MeasureGpuDetection, DetectionExportReplaysAtTheAssumedSizes) {
  SKIP_WITHOUT_GPU();
  auto run = analyse_file(MODELCOST_SOURCE_DIR "/tests/models/unseen/fasterrcnn_mobilenet_v3_large_fpn_op17.onnx");
  auto backend = make_backend(false);
  MeasureOptions options;
  options.dtype = "fp16";
  options.max_seconds_per_node = 0.01;
  for (const NodeAnalysis& n : run->analysis.nodes) {
    const std::string& op = n.node->op_type;
    if (op != "If" && op != "NonZero" && op != "RoiAlign") continue;
    const NodeMeasurement m = backend->measure_node(n, options);
    EXPECT_TRUE(m.measured) << n.node->name << ": " << m.reason;
  }
  const ModelMeasurement whole = measure_model(run->analysis, *backend, options, {});
  ASSERT_TRUE(whole.measured) << whole.reason;
  EXPECT_GT(whole.median_us, 0);
  EXPECT_NE(whole.method.find("assumed sizes"), std::string::npos) << whole.method;
}

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
