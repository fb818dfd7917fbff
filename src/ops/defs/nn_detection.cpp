// Op rules: nn family, detection and sampling ops (NonMaxSuppression, RoiAlign, MaxRoiPool,
// GridSample, AffineGrid). Formulas: docs/ops/nn.md.
#include <cmath>

#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

constexpr int32_t kInt64Type = 7;  // onnx::TensorProto::INT64
// A bilinear sample: 4 weight multiplies and 3 adds.
constexpr double kBilinearFlops = 7;

// ---- NonMaxSuppression: boxes [B, S, 4], scores [B, K, S] -> selected [num_selected, 3] ----
// Boxes kept per (batch, class): at most S, and at most max_output_boxes_per_class when known.
// The input is optional and 0 when absent, which selects nothing.
double nms_kept_per_class(const OpContext& c, int64_t boxes) {
  if (!c.has_input(2)) return 0;
  const TensorValue* v = c.value(2);
  if (!v || v->size() != 1) return static_cast<double>(boxes);
  const int64_t limit = v->as_int(0);
  if (limit < 0) return 0;
  return static_cast<double>(std::min(boxes, limit));
}

void infer_nms(OpContext& c) {
  require_rank(c, 0, 3, "boxes (batch, boxes, 4)");
  require_rank(c, 1, 3, "scores (batch, classes, boxes)");
  const Shape& boxes = c.in_shape(0);
  const Shape& scores = c.in_shape(1);
  if (boxes[2] != 4) c.fail("boxes " + shape_to_string(boxes) + " must end in 4 coordinates");
  if (scores[0] != boxes[0] || scores[2] != boxes[1])
    c.fail("scores " + shape_to_string(scores) + " do not match boxes " + shape_to_string(boxes));
  const int64_t center = c.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) c.fail("center_point_box must be 0 or 1, got " + std::to_string(center));
  const double kept = nms_kept_per_class(c, boxes[1]);
  const int64_t selected = checked_dim(c, static_cast<double>(scores[0]) * static_cast<double>(scores[1]) * kept, "the selected boxes");
  // Without the limit input nothing is selected: an exact size, not an estimate.
  c.set_output(0, kInt64Type, {selected, 3}, c.has_input(2));
}

// Upper bound per (batch, class) of S boxes, K kept: a score threshold compare per box, a sort
// (S*ceil(log2 S) compares) and an IoU (12 flops) of each kept box against each box ranked
// below it: K*S - K*(K+1)/2 pairs (S*(S-1)/2 when every box is kept).
OpCost cost_nms(const OpContext& c) {
  const Shape& scores = c.in_shape(1);
  const double s = static_cast<double>(scores[2]);
  const double k = nms_kept_per_class(c, scores[2]);
  const double classes = static_cast<double>(scores[0] * scores[1]);
  OpCost cost;
  if (s > 0) cost.flops = classes * (s + s * std::ceil(std::log2(s)) + 12 * (k * s - k * (k + 1) / 2));
  cost.estimate = c.has_input(2);
  return cost;
}

// ---- RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, oh, ow] ----
void infer_roi_align(OpContext& c) {
  require_rank(c, 0, 4, "input X (N, C, H, W)");
  require_rank(c, 1, 2, "rois (num_rois, 4)");
  const Shape& rois = c.in_shape(1);
  if (rois[1] != 4) c.fail("rois " + shape_to_string(rois) + " must be [num_rois, 4]");
  if (c.in_shape(2) != Shape{rois[0]})
    c.fail("batch_indices " + shape_to_string(c.in_shape(2)) + " must be [" + std::to_string(rois[0]) + "]");
  const std::string mode = c.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") c.fail("mode must be avg or max, got '" + mode + "'");
  const int64_t oh = c.attr_int("output_height", 1), ow = c.attr_int("output_width", 1);
  if (oh <= 0 || ow <= 0) c.fail("output_height and output_width must be positive");
  if (c.attr_int("sampling_ratio", 0) < 0) c.fail("sampling_ratio must be >= 0");
  c.set_output(0, c.in_dtype(0), {rois[0], c.in_shape(0)[1], oh, ow});
}

// Per output: samples x (bilinear sample + accumulate), one divide for avg. sampling_ratio 0
// adapts to the ROI's size: the bound is an ROI covering the whole map (marked estimate).
OpCost cost_roi_align(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const int64_t ratio = c.attr_int("sampling_ratio", 0);
  const int64_t oh = c.attr_int("output_height", 1), ow = c.attr_int("output_width", 1);
  const double samples = ratio > 0 ? static_cast<double>(ratio * ratio)
                                   : static_cast<double>(((x[2] + oh - 1) / oh) * ((x[3] + ow - 1) / ow));
  const bool avg = c.attr_string("mode", "avg") == "avg";
  OpCost cost;
  cost.flops = element_count(c.out(0).shape) * (samples * (kBilinearFlops + 1) + (avg ? 1 : 0));
  cost.estimate = ratio <= 0;
  return cost;
}

// ---- MaxRoiPool: X [N, C, H, W], rois [R, 5] -> [R, C, ph, pw] ----
void infer_max_roi_pool(OpContext& c) {
  require_rank(c, 0, 4, "input X (N, C, H, W)");
  require_rank(c, 1, 2, "rois (num_rois, 5)");
  if (c.in_shape(1)[1] != 5) c.fail("rois " + shape_to_string(c.in_shape(1)) + " must be [num_rois, 5]");
  const std::vector<int64_t> pooled = c.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    c.fail("pooled_shape must be two positive values, got " + shape_to_string(pooled));
  c.set_output(0, c.in_dtype(0), {c.in_shape(1)[0], c.in_shape(0)[1], pooled[0], pooled[1]});
}

// Upper bound (estimate): every ROI covers the whole map, one comparison per element.
OpCost cost_max_roi_pool(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  OpCost cost;
  cost.flops = static_cast<double>(c.in_shape(1)[0]) * element_count(dims_from(x, 1));
  cost.estimate = true;
  return cost;
}

// ---- GridSample: X [N, C, D1..Dr], grid [N, G1..Gr, r] -> [N, C, G1..Gr] ----
void infer_grid_sample(OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const Shape& x = c.in_shape(0);
  const Shape& grid = c.in_shape(1);
  const size_t r = x.size() - 2;
  if (grid.size() != x.size() || grid[0] != x[0] || grid.back() != static_cast<int64_t>(r))
    c.fail("grid " + shape_to_string(grid) + " must be [N, out spatial..., " + std::to_string(r) + "] for X " +
           shape_to_string(x));
  const std::string mode = c.attr_string("mode", c.opset() >= 20 ? "linear" : "bilinear");
  if (mode != "linear" && mode != "bilinear" && mode != "nearest" && mode != "cubic" && mode != "bicubic")
    c.fail("unknown mode '" + mode + "'");
  const std::string padding = c.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    c.fail("unknown padding_mode '" + padding + "'");
  Shape out = {x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  c.set_output(0, c.in_dtype(0), out);
}

// Per output value: taps weight multiplies and taps-1 adds; taps = 2^r (linear), 4^r (cubic),
// nearest does no arithmetic. The per-grid-point coordinate and weight arithmetic is shared
// by all channels and not counted.
OpCost cost_grid_sample(const OpContext& c) {
  const double r = static_cast<double>(c.in_rank(0) - 2);
  const std::string mode = c.attr_string("mode", "linear");
  const double taps = mode == "nearest" ? 0 : std::pow(mode == "cubic" || mode == "bicubic" ? 4.0 : 2.0, r);
  OpCost cost;
  cost.flops = taps > 0 ? element_count(c.out(0).shape) * (2 * taps - 1) : 0;
  return cost;
}

// ---- AffineGrid (opset 20): theta [N, r, r+1], size [N, C, D1..Dr] -> grid [N, D1..Dr, r] ----
void infer_affine_grid(OpContext& c) {
  const std::vector<int64_t> size = c.require_ints(1, "size");
  if (size.size() != 4 && size.size() != 5)
    c.fail("size " + shape_to_string(size) + " must have 4 (2-D) or 5 (3-D) values");
  for (int64_t d : size)
    if (d < 0) c.fail("size " + shape_to_string(size) + " must not be negative");
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  const Shape want_theta = {size[0], r, r + 1};
  if (c.in_shape(0) != want_theta)
    c.fail("theta " + shape_to_string(c.in_shape(0)) + " must be " + shape_to_string(want_theta));
  Shape out = {size[0]};
  out.insert(out.end(), size.begin() + 2, size.end());
  out.push_back(r);
  c.set_output(0, c.in_dtype(0), out);
}

// Each of the r output coordinates of a grid point: r multiplies and r adds (translation included).
OpCost cost_affine_grid(const OpContext& c) {
  const Shape& grid = c.out(0).shape;
  OpCost cost;
  if (grid.empty()) return cost;  // a scalar the file declares: no grid points
  const double r = static_cast<double>(grid.back());
  cost.flops = element_count(grid) * 2 * r;
  return cost;
}

}  // namespace

OpPlan plan_roi_align(const OpContext& c);  // nn_detection_plans.cpp
OpPlan plan_nms(const OpContext& c);

void register_nn_detection_ops(OpRegistry& r) {
  r.add(OpForm::kOther, {
      {"", "NonMaxSuppression", infer_nms, cost_nms, plan_nms},
      {"", "RoiAlign", infer_roi_align, cost_roi_align, plan_roi_align},
      {"", "MaxRoiPool", infer_max_roi_pool, cost_max_roi_pool, not_measured("no GPU kernel yet")},
      {"", "GridSample", infer_grid_sample, cost_grid_sample, not_measured("no GPU kernel yet")},
      {"", "AffineGrid", infer_affine_grid, cost_affine_grid, not_measured("no GPU kernel yet"), inputs(2, 2)},
  });
}

}  // namespace modelcost
