// Op rules: reduction family (ReduceX, ArgMax, ArgMin). Formulas: docs/ops/reduction.md.
// ReduceSum, ReduceProd, ReduceMax, ReduceMin and ReduceMean fold small known inputs, since shape
// computations use them (e.g. ReduceProd of a Shape gives an element count).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

constexpr int32_t kInt64Type = 7;  // onnx::TensorProto::INT64

// `axes` moved from an attribute to input 1 in opset 13 for ReduceSum, in opset 18 for the rest.
bool axes_from_input(const OpContext& c) {
  return c.opset() >= 18 || (c.node().op_type == "ReduceSum" && c.opset() >= 13);
}

// The axes given (attribute or input). *known is false when the input's contents are unknown.
std::vector<int64_t> given_axes(const OpContext& c, bool* known) {
  *known = true;
  // Lenient: a pre-18 style `axes` attribute is honoured when the input is absent.
  if (!axes_from_input(c) || !c.has_input(1)) return c.attr_ints("axes");
  const TensorValue* v = c.value(1);
  if (!v) {
    *known = false;
    return {};
  }
  return value_as_ints(*v);
}

// noop_with_empty_axes=1 with no axes: the output is the input.
bool is_noop(const OpContext& c) {
  bool known = false;
  return given_axes(c, &known).empty() && known && c.attr_int("noop_with_empty_axes", 0) != 0;
}

struct Reduction {
  std::vector<bool> reduced;  // per input dim
  bool keepdims = true;
};

Reduction read_reduction(const OpContext& c) {
  bool known = false;
  const std::vector<int64_t> axes = given_axes(c, &known);
  if (!known) throw NotInferable("axes (input 1) is not known at analysis time");
  const size_t rank = c.in_rank(0);
  Reduction r;
  r.keepdims = c.attr_int("keepdims", 1) != 0;
  r.reduced.assign(rank, axes.empty() && !is_noop(c));
  for (int64_t a : axes) {
    const auto d = static_cast<size_t>(c.axis(a, rank));
    if (r.reduced[d]) c.fail("axis " + std::to_string(a) + " is listed twice in axes");
    r.reduced[d] = true;
  }
  return r;
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i]) out.push_back(in[i]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

enum class Fold { kNone, kSum, kProd, kMax, kMin, kMean };

// Folds a reduction of a small known input into output 0's value.
void fold_reduction(OpContext& c, const Reduction& r, Fold fold) {
  const TensorValue* in = c.value(0);
  const Shape& shape = c.in_shape(0);
  const double n = element_count(shape);
  if (fold == Fold::kNone || !in || in->size() != n || !c.may_fold(n)) return;
  // Output index of an input element: its coordinates along the kept dims, row-major.
  std::vector<int64_t> out_strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;)
    if (!r.reduced[d]) {
      out_strides[d] = stride;
      stride *= shape[d];
    }
  const auto out_size = static_cast<size_t>(element_count(c.out(0).shape));
  const bool as_float = dtype_is_float(c.out(0).dtype);
  const double start = fold == Fold::kProd  ? 1
                       : fold == Fold::kMax ? -std::numeric_limits<double>::infinity()
                       : fold == Fold::kMin ? std::numeric_limits<double>::infinity()
                                            : 0;
  std::vector<double> acc_f(out_size, start);
  std::vector<int64_t> acc_i(out_size, fold == Fold::kProd ? 1
                                       : fold == Fold::kMax ? std::numeric_limits<int64_t>::min()
                                       : fold == Fold::kMin ? std::numeric_limits<int64_t>::max()
                                                            : 0);
  const std::vector<int64_t> in_strides = strides_of(shape);
  for (size_t k = 0; k < in->size(); ++k) {
    size_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      o += static_cast<size_t>((static_cast<int64_t>(k) / in_strides[d]) % shape[d] * out_strides[d]);
    if (as_float) {
      const double x = in->as_double(k);
      double& a = acc_f[o];
      a = fold == Fold::kProd ? a * x : fold == Fold::kMax ? std::max(a, x) : fold == Fold::kMin ? std::min(a, x) : a + x;
    } else {
      const int64_t x = in->as_int(k);
      int64_t& a = acc_i[o];
      try {
        a = fold == Fold::kProd ? checked_mul(a, x) : fold == Fold::kMax ? std::max(a, x)
          : fold == Fold::kMin ? std::min(a, x) : checked_add(a, x);
      } catch (const Unfoldable&) {
        return;  // int64 overflow: the value stays unknown
      }
    }
  }
  const double count = out_size ? n / static_cast<double>(out_size) : 0;
  if (fold == Fold::kMean) {
    for (double& a : acc_f) a /= count;
    for (int64_t& a : acc_i) a = count > 0 ? static_cast<int64_t>(static_cast<double>(a) / count) : 0;
  }
  c.set_value(0, as_float ? make_float_value(std::move(acc_f)) : make_int_value(std::move(acc_i)));
}

template <Fold F>
void infer_reduce(OpContext& c) {
  const Reduction r = read_reduction(c);
  c.set_output(0, c.in_dtype(0), reduced_shape(c.in_shape(0), r.reduced, r.keepdims));
  fold_reduction(c, r, F);
}

// PerInput flops per input element and PerOutput per output element; a no-op (empty axes with
// noop_with_empty_axes) is an identity that moves no data. Integer reductions (shape
// computations) are not floating-point work: 0 flops.
template <int PerInput, int PerOutput>
OpCost cost_reduce(const OpContext& c) {
  OpCost cost;
  if (is_noop(c)) {
    cost.moves_no_data = true;
    return cost;
  }
  if (computes_in_float(c))
    cost.flops = PerInput * element_count(c.in_shape(0)) + PerOutput * element_count(c.out(0).shape);
  return cost;
}

// ArgMax / ArgMin: one comparison per input element, int64 indices out.
void infer_arg_reduce(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const size_t rank = in.size();
  if (rank == 0) c.fail("input must have rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.attr_int("axis", 0), rank));
  const int64_t last = c.attr_int("select_last_index", 0);
  if (last != 0 && last != 1) c.fail("select_last_index must be 0 or 1, got " + std::to_string(last));
  std::vector<bool> reduced(rank, false);
  reduced[axis] = true;
  c.set_output(0, kInt64Type, reduced_shape(in, reduced, c.attr_int("keepdims", 1) != 0));
}

// ---- measurement: one reduction over [outer, n, inner] ----

template <ReduceOp Op>
OpPlan plan_reduce(const OpContext& c) {
  if (!float_data(c)) return unsupported(c.node().op_type + " on non-float tensors");
  if (is_noop(c)) return ZeroCostPlan{"reduction over no axes"};
  bool known = false;
  given_axes(c, &known);
  if (!known) return unsupported("reduction axes not known at analysis time");
  const Shape& in = c.in_shape(0);
  if (in.empty()) return unsupported(c.node().op_type + " of a scalar");
  const Reduction r = read_reduction(c);
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!r.reduced[d]) continue;
    if (first < 0) first = static_cast<int64_t>(d);
    last = static_cast<int64_t>(d);
  }
  // Size-1 dims may sit between reduced axes without breaking contiguity.
  for (int64_t d = first; d <= last; ++d)
    if (!r.reduced[static_cast<size_t>(d)] && in[static_cast<size_t>(d)] != 1)
      return unsupported("reduction over non-adjacent axes");
  ReducePlan p;
  static_cast<RowView&>(p) = row_view(in, first, last);
  p.op = Op;
  return p;
}

template <ReduceOp Op>
OpPlan plan_arg_reduce(const OpContext& c) {
  if (!dtype_is_float(c.in_dtype(0))) return unsupported(c.node().op_type + " of non-float data");
  const Shape& in = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), in.size());
  ReducePlan p;
  static_cast<RowView&>(p) = row_view(in, axis, axis);
  p.op = Op;
  p.select_last_index = c.attr_int("select_last_index", 0) != 0;
  return p;
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  r.add(OpTraits(OpForm::kReduction).with_row_program(), {
      {"", "ReduceSum", infer_reduce<Fold::kSum>, cost_reduce<1, 0>, plan_reduce<ReduceOp::kSum>},
      {"", "ReduceMax", infer_reduce<Fold::kMax>, cost_reduce<1, 0>, plan_reduce<ReduceOp::kMax>},
      {"", "ReduceMin", infer_reduce<Fold::kMin>, cost_reduce<1, 0>, plan_reduce<ReduceOp::kMin>},
      {"", "ReduceMean", infer_reduce<Fold::kMean>, cost_reduce<1, 1>, plan_reduce<ReduceOp::kMean>},
      {"", "ReduceL2", infer_reduce<Fold::kNone>, cost_reduce<2, 1>, plan_reduce<ReduceOp::kL2>},
      {"", "ReduceSumSquare", infer_reduce<Fold::kNone>, cost_reduce<2, 0>, plan_reduce<ReduceOp::kSumSquare>},
  });
  r.add(OpForm::kReduction, {
      {"", "ReduceProd", infer_reduce<Fold::kProd>, cost_reduce<1, 0>, plan_reduce<ReduceOp::kProd>},
      {"", "ReduceL1", infer_reduce<Fold::kNone>, cost_reduce<2, 0>, plan_reduce<ReduceOp::kL1>},
      {"", "ReduceLogSum", infer_reduce<Fold::kNone>, cost_reduce<1, 1>, plan_reduce<ReduceOp::kLogSum>},
      {"", "ReduceLogSumExp", infer_reduce<Fold::kNone>, cost_reduce<4, 2>, plan_reduce<ReduceOp::kLogSumExp>},
      {"", "ArgMax", infer_arg_reduce, cost_per_input<1>, plan_arg_reduce<ReduceOp::kArgMax>},
      {"", "ArgMin", infer_arg_reduce, cost_per_input<1>, plan_arg_reduce<ReduceOp::kArgMin>},
  });
}

}  // namespace modelcost
