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

UnsupportedPlan unsupported(const std::string& why) { return UnsupportedPlan{why}; }

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

bool float_data(const NodeSpec& s) {
  if (!s.has_input(0) || !dtype_is_float(s.in(0).dtype)) return false;
  for (const auto& t : s.outputs)
    if (t.present && !dtype_is_float(t.dtype)) return false;
  return true;
}

RowView row_view(const Shape& shape, int64_t first, int64_t last) {
  RowView v;
  v.outer = product(shape, 0, static_cast<size_t>(first));
  v.axis_len = product(shape, static_cast<size_t>(first), static_cast<size_t>(last + 1));
  v.inner = product(shape, static_cast<size_t>(last + 1), shape.size());
  return v;
}

}  // namespace plan_detail

using namespace plan_detail;

std::string plan_reason(const OpPlan& plan) {
  if (auto* z = std::get_if<ZeroCostPlan>(&plan)) return z->reason;
  if (auto* u = std::get_if<UnsupportedPlan>(&plan)) return u->reason;
  return "";
}

namespace {

using Planner = OpPlan (*)(const NodeSpec&);

// The measured kind of every standard op that runs something, by op type. Elementwise ops come
// from elementwise_ops.h (plan_elementwise); ops absent here name their reason.
const std::unordered_map<std::string, Planner>& planners() {
  static const std::unordered_map<std::string, Planner> table = {
      {"Transpose", plan_transpose}, {"Slice", plan_slice}, {"Concat", plan_concat}, {"Split", plan_split},
      {"Gather", plan_gather}, {"Expand", plan_expand}, {"Pad", plan_pad}, {"Tile", plan_tile},
      {"GatherElements", plan_gather_elements}, {"ScatterElements", plan_scatter_elements},
      {"Scatter", plan_scatter_elements}, {"GatherND", plan_gather_nd}, {"ScatterND", plan_scatter_nd},
      {"Range", plan_range},
      {"ReduceSum", plan_reduce}, {"ReduceMean", plan_reduce}, {"ReduceMax", plan_reduce}, {"ReduceMin", plan_reduce},
      {"ReduceSumSquare", plan_reduce}, {"ReduceL2", plan_reduce}, {"ReduceL1", plan_reduce},
      {"ReduceLogSumExp", plan_reduce}, {"ReduceLogSum", plan_reduce}, {"ReduceProd", plan_reduce}, {"ArgMax", plan_arg_reduce},
      {"ArgMin", plan_arg_reduce}, {"GlobalAveragePool", plan_global_pool}, {"GlobalMaxPool", plan_global_pool},
      {"Softmax", plan_softmax}, {"LogSoftmax", plan_softmax}, {"LayerNormalization", plan_layer_norm},
      {"BatchNormalization", plan_batch_norm}, {"CumSum", plan_cumsum},
      {"Conv", plan_conv}, {"MaxPool", plan_pool}, {"AveragePool", plan_pool}, {"MatMul", plan_matmul},
      {"Gemm", plan_gemm}, {"Resize", plan_resize}, {"Upsample", plan_resize}};
  return table;
}

const std::set<std::string>& zero_cost_ops() {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                            "Dropout", "Shape", "Size", "Constant"};
  return ops;
}

}  // namespace

bool plan_detail::has_planner(const std::string& op_type) {
  return is_elementwise(op_type) || planners().count(op_type) > 0 || zero_cost_ops().count(op_type) > 0;
}

OpPlan plan_operation(const NodeSpec& s) {
  for (const auto& t : s.outputs)
    if (t.present && element_count(t.shape) == 0) return ZeroCostPlan{"empty output"};
  if (!s.domain.empty() && s.domain != "ai.onnx") return unsupported("op of domain " + s.domain);
  if (zero_cost_ops().count(s.op_type)) return ZeroCostPlan{"reinterprets its input; moves no data"};
  bool all_folded = !s.outputs.empty();
  for (const auto& t : s.outputs)
    if (t.present && !t.value) all_folded = false;
  if (all_folded) return ZeroCostPlan{"output folded at analysis time"};
  if (s.outputs.empty() || !s.outputs[0].present) return unsupported("node without output");
  if (!s.has_input(0) && s.op_type != "Range") return unsupported("node without its first input");
  if (is_elementwise(s.op_type)) return plan_elementwise(s);
  if (auto it = planners().find(s.op_type); it != planners().end()) return it->second(s);
  return unsupported(gap_is_named(s.op_type) ? s.op_type + ": " + measurement_gap(s.op_type) : measurement_gap(s.op_type));
}

InputRange input_range(const NodeSpec& spec, const OpPlan& plan, size_t index) {
  InputRange r;
  if (spec.in(index).dtype == 9) r.int_range = 2;  // bool
  std::visit(Overloaded{
                 [&](const ElementwisePlan& e) {
                   using Op = ElementwiseOp;
                   const bool positive = e.op == Op::kLog || e.op == Op::kSqrt || e.op == Op::kReciprocal ||
                                         (e.op == Op::kPow && index == 0) || e.op == Op::kMod || e.op == Op::kFMod;
                   if (positive) r.lo = 0.1f;
                   if (e.op == Op::kAcosh) { r.lo = 1.f; r.hi = 2.f; }
                   if ((e.op == Op::kMod || e.op == Op::kFMod) && index == 1) r.int_range = 3;
                 },
                 [&](const BatchNormPlan&) { if (index == 4) r.lo = 0.1f; },  // a variance
                 [&](const ReducePlan& p) { if (p.op == ReduceOp::kLogSum) r.lo = 0.1f; },
                 [&](const GatherPlan& g) { r.int_range = g.axis_len; },
                 [&](const IndexedPlan& p) { if (index == 1) r.int_range = p.smallest_indexed_dim(); },
                 [&](const RangePlan&) { r.lo = 0; r.hi = 1; r.int_range = 1; },
                 [&](const auto&) {},
             },
             plan);
  return r;
}

}  // namespace modelcost
