// Plans of elementwise operations: every op of elementwise_ops.h by its ONNX name, plus Cast,
// CastLike and the variadic Sum / Mean / Max / Min of one or two inputs.
#include <limits>
#include <unordered_map>

#include "measure/op_plan_internal.h"

namespace modelcost::plan_detail {
namespace {

const std::unordered_map<std::string, ElementwiseOp>& ops_by_name() {
  static const std::unordered_map<std::string, ElementwiseOp> table = [] {
    std::unordered_map<std::string, ElementwiseOp> t;
#define MC_NAME_ENTRY(name, onnx, flops, expr) \
  if (*onnx) t.emplace(onnx, ElementwiseOp::k##name);
    MC_UNARY_OPS(MC_NAME_ENTRY) MC_BINARY_OPS(MC_NAME_ENTRY) MC_TERNARY_OPS(MC_NAME_ENTRY)
#undef MC_NAME_ENTRY
    t.emplace("Cast", ElementwiseOp::kIdentity);
    t.emplace("CastLike", ElementwiseOp::kIdentity);
    t.emplace("Sum", ElementwiseOp::kAdd);
    t.emplace("Mean", ElementwiseOp::kMean);
    t.erase("Identity");  // a zero-cost alias, not a copy
    return t;
  }();
  return table;
}

// Attribute parameters and attribute-chosen variants of an op; false with *why on bad input.
bool read_parameters(const NodeSpec& s, ElementwisePlan& p, std::string* why) {
  const Attributes& a = s.attributes;
  using Op = ElementwiseOp;
  switch (p.op) {
    case Op::kLeakyRelu: p.alpha = a.get_float("alpha", 0.01); break;
    case Op::kElu: case Op::kCelu: case Op::kThresholdedRelu: p.alpha = a.get_float("alpha", 1.0); break;
    case Op::kSelu:
      p.alpha = a.get_float("alpha", 1.67326319217681884765625);
      p.beta = a.get_float("gamma", 1.05070102214813232421875);
      break;
    case Op::kShrink: p.alpha = a.get_float("bias", 0.0); p.beta = a.get_float("lambd", 0.5); break;
    case Op::kHardSigmoid: p.alpha = a.get_float("alpha", 0.2); p.beta = a.get_float("beta", 0.5); break;
    case Op::kIsInf:
      p.alpha = static_cast<double>(a.get_int("detect_positive", 1));
      p.beta = static_cast<double>(a.get_int("detect_negative", 1));
      break;
    case Op::kGelu: if (a.get_string("approximate", "none") == "tanh") p.op = Op::kGeluTanh; break;
    case Op::kMod: if (a.get_int("fmod", 0) != 0) p.op = Op::kFMod; break;
    case Op::kClip:
      p.alpha = -std::numeric_limits<double>::infinity();
      p.beta = std::numeric_limits<double>::infinity();
      if (s.opset < 11) {
        p.alpha = a.get_float("min", p.alpha);
        p.beta = a.get_float("max", p.beta);
      } else {
        if (s.has_input(1) && !known_scalar(s.in(1), &p.alpha)) return *why = "Clip min not known at analysis time", false;
        if (s.has_input(2) && !known_scalar(s.in(2), &p.beta)) return *why = "Clip max not known at analysis time", false;
      }
      break;
    default: break;
  }
  if (s.op_type == "BitShift") p.op = a.get_string("direction", "") == "RIGHT" ? Op::kBitShiftRight : Op::kBitShiftLeft;
  return true;
}

}  // namespace

bool is_elementwise(const std::string& op_type) {
  return ops_by_name().count(op_type) > 0 || op_type == "BitShift";
}

OpPlan plan_elementwise(const NodeSpec& s) {
  ElementwisePlan p;
  p.op = s.op_type == "BitShift" ? ElementwiseOp::kBitShiftLeft : ops_by_name().at(s.op_type);
  std::string why;
  if (!read_parameters(s, p, &why)) return unsupported(why);
  int arity = elementwise_arity(p.op);
  size_t present = 0;
  for (size_t i = 0; i < s.inputs.size(); ++i) present += s.has_input(i);
  const bool variadic = s.op_type == "Sum" || s.op_type == "Mean" || s.op_type == "Max" || s.op_type == "Min";
  if (variadic && present == 1) {  // one input: a copy
    p.op = ElementwiseOp::kIdentity;
    arity = 1;
  } else if (variadic && present > 2) {
    return unsupported(s.op_type + " of more than 2 inputs");
  }
  if (static_cast<int>(present) < arity) return unsupported(s.op_type + " without its " + std::to_string(arity) + " inputs");
  p.dims = s.outputs[0].shape;
  for (int i = 0; i < arity; ++i) p.input_strides.push_back(broadcast_strides(s.in(static_cast<size_t>(i)).shape, p.dims));
  return p;
}

}  // namespace modelcost::plan_detail
