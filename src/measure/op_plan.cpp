#include "measure/op_plan.h"

#include "measure/op_plan_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <unordered_map>

namespace modelcost {

double StridedCopy::elements() const {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

void StridedCopy::merge_dims() {
  std::vector<int64_t> d, s, t;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;  // size-1 dims never move the index
    if (!d.empty() && s.back() == src_strides[i] * dims[i] && t.back() == dst_strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = src_strides[i];
      t.back() = dst_strides[i];
    } else {
      d.push_back(dims[i]);
      s.push_back(src_strides[i]);
      t.push_back(dst_strides[i]);
    }
  }
  if (d.empty()) { d = {1}; s = {0}; t = {0}; }
  dims = d;
  src_strides = s;
  dst_strides = t;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  std::vector<int64_t> own = contiguous_strides(shape);
  std::vector<int64_t> out(target.size(), 0);
  const size_t offset = target.size() - std::min(target.size(), shape.size());
  for (size_t i = 0; i < shape.size() && i + offset < target.size(); ++i)
    out[i + offset] = shape[i] == 1 && target[i + offset] != 1 ? 0 : own[i];
  return out;
}

namespace plan_detail {

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int64_t normalize_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

OpPlan unsupported(const std::string& why) {
  OpPlan p;
  p.kind = OpKind::kUnsupported;
  p.reason = why;
  return p;
}

std::vector<int64_t> known_ints(const TensorSpec& t, bool* ok) {
  if (!t.present) return {};
  if (!t.value) { *ok = false; return {}; }
  std::vector<int64_t> v;
  for (size_t i = 0; i < t.value->size(); ++i) v.push_back(t.value->as_int(i));
  return v;
}

bool known_scalar(const TensorSpec& t, double* out) {
  if (!t.present || !t.value || t.value->size() != 1) return false;
  *out = t.value->as_double(0);
  return true;
}

OpPlan zero_cost(const std::string& why) {
  OpPlan p;
  p.kind = OpKind::kZeroCost;
  p.reason = why;
  return p;
}

bool all_float(const NodeSpec& s) {
  for (const auto& t : s.inputs)
    if (t.present && !dtype_is_float(t.dtype)) return false;
  for (const auto& t : s.outputs)
    if (t.present && !dtype_is_float(t.dtype)) return false;
  return true;
}

}  // namespace plan_detail

using namespace plan_detail;

namespace {

const std::unordered_map<std::string, UnaryOp>& unary_ops() {
  static const std::unordered_map<std::string, UnaryOp> ops = {
      {"Relu", UnaryOp::kRelu}, {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},
      {"Erf", UnaryOp::kErf}, {"Exp", UnaryOp::kExp}, {"Log", UnaryOp::kLog}, {"Sqrt", UnaryOp::kSqrt},
      {"Neg", UnaryOp::kNeg}, {"Abs", UnaryOp::kAbs}, {"Reciprocal", UnaryOp::kReciprocal},
      {"Gelu", UnaryOp::kGelu}, {"HardSigmoid", UnaryOp::kHardSigmoid}, {"HardSwish", UnaryOp::kHardSwish},
      {"LeakyRelu", UnaryOp::kLeakyRelu}, {"Clip", UnaryOp::kClip}, {"Softplus", UnaryOp::kSoftplus},
      {"Elu", UnaryOp::kElu}, {"Floor", UnaryOp::kFloor}, {"Ceil", UnaryOp::kCeil}, {"Cast", UnaryOp::kIdentity},
      {"CastLike", UnaryOp::kIdentity}};
  return ops;
}

const std::unordered_map<std::string, BinaryOp>& binary_ops() {
  static const std::unordered_map<std::string, BinaryOp> ops = {
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow}, {"Max", BinaryOp::kMax}, {"Min", BinaryOp::kMin}, {"PRelu", BinaryOp::kPRelu}};
  return ops;
}

const std::unordered_map<std::string, ReduceOp>& reduce_ops() {
  static const std::unordered_map<std::string, ReduceOp> ops = {
      {"ReduceSum", ReduceOp::kSum}, {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin}, {"ReduceSumSquare", ReduceOp::kSumSquare}, {"ReduceL2", ReduceOp::kL2},
      {"ReduceL1", ReduceOp::kL1}, {"ReduceLogSumExp", ReduceOp::kLogSumExp}};
  return ops;
}

const std::set<std::string>& zero_cost_ops() {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                            "Dropout", "Shape", "Size", "Constant"};
  return ops;
}

}  // namespace

OpPlan plan_operation(const NodeSpec& s) {
  for (const auto& t : s.outputs)
    if (t.present && element_count(t.shape) == 0) {
      OpPlan p;
      p.kind = OpKind::kZeroCost;
      p.reason = "empty output";
      return p;
    }
  if (!s.domain.empty() && s.domain != "ai.onnx") return unsupported("op of domain " + s.domain);
  if (zero_cost_ops().count(s.op_type)) {
    OpPlan p;
    p.kind = OpKind::kZeroCost;
    p.reason = "reinterprets its input; moves no data";
    return p;
  }
  bool all_folded = !s.outputs.empty();
  for (const auto& t : s.outputs)
    if (t.present && !t.value) all_folded = false;
  if (all_folded) {
    OpPlan p;
    p.kind = OpKind::kZeroCost;
    p.reason = "output folded at analysis time";
    return p;
  }
  if (s.outputs.empty() || !s.outputs[0].present || !s.has_input(0)) return unsupported("node without input or output");
  const std::string& op = s.op_type;
  if (auto it = unary_ops().find(op); it != unary_ops().end()) return plan_unary(s, it->second);
  if (auto it = binary_ops().find(op); it != binary_ops().end()) return plan_binary(s, it->second);
  if (auto it = reduce_ops().find(op); it != reduce_ops().end()) return plan_reduce(s, it->second);
  if (op == "Where") return plan_where(s);
  if (op == "Tile") return plan_tile(s);
  if (op == "BatchNormalization") return plan_batch_norm(s);
  if (op == "Transpose") return plan_transpose(s);
  if (op == "Slice") return plan_slice(s);
  if (op == "Concat") return plan_concat(s);
  if (op == "Split") return plan_split(s);
  if (op == "Gather") return plan_gather(s);
  if (op == "Expand") return plan_expand(s);
  if (op == "Pad") return plan_pad(s);
  if (op == "GlobalAveragePool") return plan_global_pool(s, ReduceOp::kMean);
  if (op == "GlobalMaxPool") return plan_global_pool(s, ReduceOp::kMax);
  if (op == "Softmax" || op == "LogSoftmax") return plan_softmax(s);
  if (op == "LayerNormalization") return plan_layer_norm(s);
  if (op == "Conv") return plan_conv(s);
  if (op == "MaxPool" || op == "AveragePool") return plan_pool(s);
  if (op == "MatMul") return plan_matmul(s);
  if (op == "Gemm") return plan_gemm(s);
  if (op == "Resize" || op == "Upsample") return plan_resize(s);
  return unsupported("no measurement kernel for " + op);
}

}  // namespace modelcost
