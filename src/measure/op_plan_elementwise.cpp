// Plans of elementwise operations: unary (Cast between float types too), broadcasting binary, Where.
#include "measure/op_plan_internal.h"

#include <limits>

namespace modelcost::plan_detail {

OpPlan plan_unary(const NodeSpec& s, UnaryOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  const bool cast = s.op_type == "Cast" || s.op_type == "CastLike";
  if (!cast && s.in(0).dtype != s.outputs[0].dtype) return unsupported(s.op_type + " with different input and output dtypes");
  OpPlan p;
  p.kind = OpKind::kUnary;
  p.unary = op;
  p.dims = s.outputs[0].shape;
  p.input_strides = {contiguous_strides(p.dims)};
  const Attributes& a = s.attributes;
  if (op == UnaryOp::kLeakyRelu) p.alpha = a.get_float("alpha", 0.01);
  if (op == UnaryOp::kElu) p.alpha = a.get_float("alpha", 1.0);
  if (op == UnaryOp::kHardSigmoid) { p.alpha = a.get_float("alpha", 0.2); p.beta = a.get_float("beta", 0.5); }
  if (op == UnaryOp::kGelu && a.get_string("approximate", "none") == "tanh") p.unary = UnaryOp::kGeluTanh;
  if (op == UnaryOp::kClip) {
    p.alpha = -std::numeric_limits<double>::infinity();
    p.beta = std::numeric_limits<double>::infinity();
    if (s.opset < 11) {
      p.alpha = a.get_float("min", p.alpha);
      p.beta = a.get_float("max", p.beta);
    } else {
      if (s.has_input(1) && !known_scalar(s.in(1), &p.alpha)) return unsupported("Clip min not known");
      if (s.has_input(2) && !known_scalar(s.in(2), &p.beta)) return unsupported("Clip max not known");
    }
  }
  return p;
}

OpPlan plan_binary(const NodeSpec& s, BinaryOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  if (s.inputs.size() != 2 || !s.has_input(1)) return unsupported(s.op_type + " with other than 2 inputs");
  OpPlan p;
  p.kind = OpKind::kBinary;
  p.binary = op;
  p.dims = s.outputs[0].shape;
  p.input_strides = {broadcast_strides(s.in(0).shape, p.dims), broadcast_strides(s.in(1).shape, p.dims)};
  return p;
}

OpPlan plan_where(const NodeSpec& s) {
  if (s.inputs.size() != 3 || !s.has_input(1) || !s.has_input(2)) return unsupported("Where without 3 inputs");
  if (s.in(0).dtype != 9) return unsupported("Where with a non-bool condition");
  if (!dtype_is_float(s.in(1).dtype) || s.in(1).dtype != s.outputs[0].dtype) return unsupported("Where on non-float tensors");
  OpPlan p;
  p.kind = OpKind::kWhere;
  p.dims = s.outputs[0].shape;
  for (size_t i = 0; i < 3; ++i) p.input_strides.push_back(broadcast_strides(s.in(i).shape, p.dims));
  return p;
}


}  // namespace modelcost::plan_detail
