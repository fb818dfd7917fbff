// Plans of row operations over an [outer, n, inner] view: reductions, global pooling, softmax,
// layer norm, batch norm.
#include "measure/op_plan_internal.h"

#include <algorithm>

namespace modelcost::plan_detail {

OpPlan plan_reduce(const NodeSpec& s, ReduceOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  const Shape& in = s.in(0).shape;
  std::vector<int64_t> axes;
  const bool axes_as_input = s.opset >= 18 || (s.op_type == "ReduceSum" && s.opset >= 13);
  if (axes_as_input) {
    bool ok = true;
    axes = known_ints(s.in(1), &ok);
    if (!ok) return unsupported("reduction axes not known at analysis time");
  } else {
    axes = s.attributes.get_ints("axes");
  }
  if (axes.empty()) {
    if (s.attributes.get_int("noop_with_empty_axes", 0)) {
      OpPlan p;
      p.kind = OpKind::kZeroCost;
      p.reason = "reduction over no axes";
      return p;
    }
    for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (auto& a : axes) a = normalize_axis(a, in.size());
  std::sort(axes.begin(), axes.end());
  // Size-1 dims may sit between reduced axes without breaking contiguity.
  for (size_t i = 1; i < axes.size(); ++i)
    for (int64_t d = axes[i - 1] + 1; d < axes[i]; ++d)
      if (in[d] != 1) return unsupported("reduction over non-adjacent axes");
  OpPlan p;
  p.kind = OpKind::kReduce;
  p.reduce = op;
  p.outer = product(in, 0, axes.front());
  p.axis_len = product(in, axes.front(), axes.back() + 1);
  p.inner = product(in, axes.back() + 1, in.size());
  return p;
}

OpPlan plan_global_pool(const NodeSpec& s, ReduceOp op) {
  const Shape& in = s.in(0).shape;
  if (in.size() < 3) return unsupported("global pooling needs N, C and spatial dims");
  OpPlan p;
  p.kind = OpKind::kReduce;
  p.reduce = op;
  p.outer = in[0] * in[1];
  p.axis_len = product(in, 2, in.size());
  p.inner = 1;
  return p;
}

OpPlan plan_softmax(const NodeSpec& s) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  const Shape& in = s.in(0).shape;
  OpPlan p;
  p.kind = OpKind::kSoftmax;
  p.log_softmax = s.op_type == "LogSoftmax";
  if (s.opset >= 13) {
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
    p.outer = product(in, 0, axis);
    p.axis_len = in[axis];
    p.inner = product(in, axis + 1, in.size());
  } else {
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", 1), in.size());
    p.outer = product(in, 0, axis);
    p.axis_len = product(in, axis, in.size());
  }
  return p;
}

OpPlan plan_layer_norm(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("LayerNormalization on non-float tensors");
  const Shape& in = s.in(0).shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
  OpPlan p;
  p.kind = OpKind::kLayerNorm;
  p.outer = product(in, 0, axis);
  p.axis_len = product(in, axis, in.size());
  p.epsilon = s.attributes.get_float("epsilon", 1e-5);
  p.has_scale = s.has_input(1);
  p.has_bias = s.has_input(2);
  if ((p.has_scale && element_count(s.in(1).shape) != p.axis_len) ||
      (p.has_bias && element_count(s.in(2).shape) != p.axis_len))
    return unsupported("LayerNormalization with broadcast scale or bias");
  return p;
}

// Inference BatchNormalization over [N, C, spatial...] (training mode writes running statistics).
OpPlan plan_batch_norm(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("BatchNormalization on non-float tensors");
  if (s.inputs.size() < 5) return unsupported("BatchNormalization without scale, bias, mean and variance");
  for (size_t o = 1; o < s.outputs.size(); ++o)
    if (s.outputs[o].present) return unsupported("BatchNormalization in training mode");
  if (s.attributes.get_int("training_mode", 0) != 0) return unsupported("BatchNormalization in training mode");
  const Shape& in = s.in(0).shape;
  if (in.size() < 2) return unsupported("BatchNormalization of rank below 2");
  for (size_t i = 1; i < 5; ++i)
    if (element_count(s.in(i).shape) != in[1]) return unsupported("BatchNormalization parameters not of C elements");
  OpPlan p;
  p.kind = OpKind::kBatchNorm;
  p.outer = in[0];
  p.axis_len = in[1];
  p.inner = product(in, 2, in.size());
  p.epsilon = s.attributes.get_float("epsilon", 1e-5);
  return p;
}


}  // namespace modelcost::plan_detail
