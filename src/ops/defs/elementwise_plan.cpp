// The plan of every elementwise op: an op of elementwise_ops.h by its ONNX name, plus Cast,
// CastLike and the variadic Sum / Mean / Max / Min of one or two inputs. The rows of math.cpp,
// logical.cpp, tensor.cpp and tensor_indexing.cpp name it.
#include <limits>
#include <unordered_map>

#include "ops/plan_helpers.h"

namespace modelcost {
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
    t.emplace("BitShift", ElementwiseOp::kBitShiftLeft);
    return t;
  }();
  return table;
}

// Clip's bounds: attributes before opset 11, known inputs since.
bool read_clip_bounds(const OpContext& c, ElementwisePlan& p, std::string* why) {
  p.alpha = -std::numeric_limits<double>::infinity();
  p.beta = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    p.alpha = c.attr_float("min", -std::numeric_limits<float>::infinity());
    p.beta = c.attr_float("max", std::numeric_limits<float>::infinity());
    return true;
  }
  if (c.has_input(1) && !known_scalar(c, 1, &p.alpha)) return *why = "Clip min not known at analysis time", false;
  if (c.has_input(2) && !known_scalar(c, 2, &p.beta)) return *why = "Clip max not known at analysis time", false;
  return true;
}

// Attribute parameters and attribute-chosen variants of an op; false with *why on bad input.
bool read_parameters(const OpContext& c, ElementwisePlan& p, std::string* why) {
  using Op = ElementwiseOp;
  switch (p.op) {
    case Op::kLeakyRelu: p.alpha = c.attr_float("alpha", 0.01f); break;
    case Op::kElu: case Op::kCelu: case Op::kThresholdedRelu: p.alpha = c.attr_float("alpha", 1.0f); break;
    case Op::kSelu:
      p.alpha = c.attr_float("alpha", 1.67326319217681884765625f);
      p.beta = c.attr_float("gamma", 1.05070102214813232421875f);
      break;
    case Op::kShrink: p.alpha = c.attr_float("bias", 0.0f); p.beta = c.attr_float("lambd", 0.5f); break;
    case Op::kHardSigmoid: p.alpha = c.attr_float("alpha", 0.2f); p.beta = c.attr_float("beta", 0.5f); break;
    case Op::kIsInf:
      p.alpha = static_cast<double>(c.attr_int("detect_positive", 1));
      p.beta = static_cast<double>(c.attr_int("detect_negative", 1));
      break;
    case Op::kGelu: if (c.attr_string("approximate", "none") == "tanh") p.op = Op::kGeluTanh; break;
    case Op::kMod: if (c.attr_int("fmod", 0) != 0) p.op = Op::kFMod; break;
    case Op::kClip: return read_clip_bounds(c, p, why);
    case Op::kBitShiftLeft: if (c.attr_string("direction", "") == "RIGHT") p.op = Op::kBitShiftRight; break;
    default: break;
  }
  return true;
}

}  // namespace

OpPlan plan_elementwise(const OpContext& c) {
  const std::string& op_type = c.node().op_type;
  const auto it = ops_by_name().find(op_type);
  if (it == ops_by_name().end()) return unsupported(op_type + " is not in the elementwise list");
  ElementwisePlan p;
  p.op = it->second;
  std::string why;
  if (!read_parameters(c, p, &why)) return unsupported(why);
  int arity = elementwise_arity(p.op);
  size_t present = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) present += c.has_input(i);
  const bool variadic = op_type == "Sum" || op_type == "Mean" || op_type == "Max" || op_type == "Min";
  if (variadic && present == 1) {  // one input: a copy
    p.op = ElementwiseOp::kIdentity;
    arity = 1;
  } else if (variadic && present > 2) {
    return unsupported(op_type + " of more than 2 inputs");
  }
  if (static_cast<int>(present) < arity) return unsupported(op_type + " without its " + std::to_string(arity) + " inputs");
  p.dims = c.out(0).shape;
  for (int i = 0; i < arity; ++i) p.input_strides.push_back(broadcast_strides(c.in_shape(static_cast<size_t>(i)), p.dims));
  return p;
}

}  // namespace modelcost
