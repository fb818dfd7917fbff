// Plans of row operations over an [outer, n, inner] view: reductions (axes as attribute or, since
// opset 18, as input), ArgMax / ArgMin, global pooling, softmax, layer norm, batch norm, CumSum.
#include <algorithm>
#include <unordered_map>

#include "measure/op_plan_internal.h"

namespace modelcost::plan_detail {
namespace {

const std::unordered_map<std::string, ReduceOp>& reduce_ops() {
  static const std::unordered_map<std::string, ReduceOp> ops = {
      {"ReduceSum", ReduceOp::kSum}, {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin}, {"ReduceSumSquare", ReduceOp::kSumSquare}, {"ReduceL2", ReduceOp::kL2},
      {"ReduceL1", ReduceOp::kL1}, {"ReduceLogSumExp", ReduceOp::kLogSumExp}, {"ReduceLogSum", ReduceOp::kLogSum},
      {"ReduceProd", ReduceOp::kProd}};
  return ops;
}

}  // namespace

OpPlan plan_reduce(const NodeSpec& s) {
  if (!float_data(s)) return unsupported(s.op_type + " on non-float tensors");
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
    if (axes_as_input && s.attributes.get_int("noop_with_empty_axes", 0)) return ZeroCostPlan{"reduction over no axes"};
    for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (in.empty()) return unsupported(s.op_type + " of a scalar");
  for (auto& a : axes) a = normalize_axis(a, in.size());
  std::sort(axes.begin(), axes.end());
  // Size-1 dims may sit between reduced axes without breaking contiguity.
  for (size_t i = 1; i < axes.size(); ++i)
    for (int64_t d = axes[i - 1] + 1; d < axes[i]; ++d)
      if (in[d] != 1) return unsupported("reduction over non-adjacent axes");
  ReducePlan p;
  static_cast<RowView&>(p) = row_view(in, axes.front(), axes.back());
  p.op = reduce_ops().at(s.op_type);
  return p;
}

OpPlan plan_arg_reduce(const NodeSpec& s) {
  if (!s.has_input(0) || !dtype_is_float(s.in(0).dtype)) return unsupported(s.op_type + " of non-float data");
  const Shape& in = s.in(0).shape;
  if (in.empty()) return unsupported(s.op_type + " of a scalar");
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", 0), in.size());
  ReducePlan p;
  static_cast<RowView&>(p) = row_view(in, axis, axis);
  p.op = s.op_type == "ArgMax" ? ReduceOp::kArgMax : ReduceOp::kArgMin;
  p.select_last_index = s.attributes.get_int("select_last_index", 0) != 0;
  return p;
}

OpPlan plan_global_pool(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  if (!float_data(s)) return unsupported(s.op_type + " on non-float tensors");
  if (in.size() < 3) return unsupported("global pooling needs N, C and spatial dims");
  ReducePlan p;
  p.op = s.op_type == "GlobalMaxPool" ? ReduceOp::kMax : ReduceOp::kMean;
  p.outer = in[0] * in[1];
  p.axis_len = product(in, 2, in.size());
  p.inner = 1;
  return p;
}

OpPlan plan_softmax(const NodeSpec& s) {
  if (!float_data(s)) return unsupported(s.op_type + " on non-float tensors");
  const Shape& in = s.in(0).shape;
  if (in.empty()) return unsupported(s.op_type + " of a scalar");
  SoftmaxPlan p;
  p.log_softmax = s.op_type == "LogSoftmax";
  if (s.opset >= 13) {
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
    static_cast<RowView&>(p) = row_view(in, axis, axis);
  } else {  // before opset 13 the input is coerced to 2-D at axis
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", 1), in.size());
    static_cast<RowView&>(p) = row_view(in, axis, static_cast<int64_t>(in.size()) - 1);
  }
  return p;
}

OpPlan plan_layer_norm(const NodeSpec& s) {
  if (!float_data(s)) return unsupported("LayerNormalization on non-float tensors");
  const Shape& in = s.in(0).shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
  LayerNormPlan p;
  static_cast<RowView&>(p) = row_view(in, axis, static_cast<int64_t>(in.size()) - 1);
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
  if (!float_data(s)) return unsupported("BatchNormalization on non-float tensors");
  if (s.inputs.size() < 5) return unsupported("BatchNormalization without scale, bias, mean and variance");
  for (size_t o = 1; o < s.outputs.size(); ++o)
    if (s.outputs[o].present) return unsupported("BatchNormalization in training mode");
  if (s.attributes.get_int("training_mode", 0) != 0) return unsupported("BatchNormalization in training mode");
  const Shape& in = s.in(0).shape;
  if (in.size() < 2) return unsupported("BatchNormalization of rank below 2");
  for (size_t i = 1; i < 5; ++i)
    if (element_count(s.in(i).shape) != in[1]) return unsupported("BatchNormalization parameters not of C elements");
  BatchNormPlan p;
  static_cast<RowView&>(p) = row_view(in, 1, 1);
  p.epsilon = s.attributes.get_float("epsilon", 1e-5);
  return p;
}

OpPlan plan_cumsum(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  double axis = 0;
  if (!known_scalar(s.in(1), &axis)) return unsupported("CumSum axis not known at analysis time");
  if (in.empty()) return unsupported("CumSum of a scalar");
  ScanPlan p;
  static_cast<RowView&>(p) = row_view(in, normalize_axis(static_cast<int64_t>(axis), in.size()),
                                      normalize_axis(static_cast<int64_t>(axis), in.size()));
  p.exclusive = s.attributes.get_int("exclusive", 0) != 0;
  p.reverse = s.attributes.get_int("reverse", 0) != 0;
  return p;
}

}  // namespace modelcost::plan_detail
