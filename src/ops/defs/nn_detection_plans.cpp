// Plans of the detection ops: RoiAlign and NonMaxSuppression (the rows of nn_detection.cpp name
// them). NonMaxSuppression's output keeps the shape rule's bound: every (batch, class) may keep
// up to max_per_class boxes, so a run of the plan has the size the analyzer assumed.
#include <algorithm>

#include "ops/defs/nn_common.h"

namespace modelcost {

OpPlan plan_roi_align(const OpContext& c) {
  if (!float_data(c) || !dtype_is_float(c.in_dtype(1))) return unsupported("RoiAlign on non-float tensors");
  const Shape& x = c.in_shape(0);
  RoiAlignPlan p;
  p.batches = x[0];
  p.rois = c.in_shape(1)[0];
  p.channels = x[1];
  p.height = x[2];
  p.width = x[3];
  p.out_h = c.attr_int("output_height", 1);
  p.out_w = c.attr_int("output_width", 1);
  p.sampling_ratio = c.attr_int("sampling_ratio", 0);
  p.spatial_scale = static_cast<float>(c.attr_float("spatial_scale", 1.0));
  p.max = c.attr_string("mode", "avg") == "max";
  // Opset 10 has no attribute and computes as output_half_pixel; from opset 16 the default is half_pixel.
  const std::string mode = c.attr_string("coordinate_transformation_mode", c.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (mode != "half_pixel" && mode != "output_half_pixel") return unsupported("RoiAlign coordinate mode " + mode);
  p.half_pixel = mode == "half_pixel";
  return p;
}

OpPlan plan_nms(const OpContext& c) {
  const Shape& scores = c.in_shape(1);
  NmsPlan p;
  p.batches = scores[0];
  p.classes = scores[1];
  p.boxes = scores[2];
  p.center_point_box = c.attr_int("center_point_box", 0) != 0;
  if (!c.has_input(2)) return ZeroCostPlan{"no max_output_boxes_per_class: nothing selected"};
  const int64_t rows = c.out(0).shape[0];
  p.max_per_class = p.batches * p.classes > 0 ? rows / (p.batches * p.classes) : 0;
  double value = 0;
  if (c.has_input(3)) {
    if (!known_scalar(c, 3, &value)) return unsupported("NonMaxSuppression iou_threshold not known at analysis time");
    p.iou_threshold = static_cast<float>(value);
  }
  if (c.has_input(4)) {
    if (!known_scalar(c, 4, &value)) return unsupported("NonMaxSuppression score_threshold not known at analysis time");
    p.score_threshold = static_cast<float>(value);
    p.has_score_threshold = true;
  }
  if (p.boxes >= (int64_t{1} << 31)) return unsupported("NonMaxSuppression of 2^31 boxes or more");
  return p;
}

}  // namespace modelcost
