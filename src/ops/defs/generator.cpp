// Op rules: generator family (ai.onnx): Constant, ConstantOfShape, Range, EyeLike, random ops.
// They read no float data and compute few flops; their outputs feed shape computations, so
// small results are folded.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "graph/tensor_proto.h"
#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

void infer_constant(OpContext& c) {
  const auto* a = c.attr("value");
  if (a && a->has_t()) {
    const auto& t = a->t();
    const Shape shape = tensor_proto_shape(t);
    c.set_output(0, t.data_type(), shape);
    if (auto v = read_tensor_value(t, kMaxFoldedElements)) c.set_value(0, *v);
    return;
  }
  if ((a = c.attr("value_float"))) { c.set_output(0, onnx::TensorProto::FLOAT, {}); c.set_value(0, make_float_value({a->f()})); return; }
  if ((a = c.attr("value_int"))) { c.set_output(0, onnx::TensorProto::INT64, {}); c.set_value(0, make_int_value({a->i()})); return; }
  if ((a = c.attr("value_floats"))) {
    std::vector<double> f(a->floats().begin(), a->floats().end());
    c.set_output(0, onnx::TensorProto::FLOAT, {static_cast<int64_t>(f.size())});
    c.set_value(0, make_float_value(std::move(f)));
    return;
  }
  if ((a = c.attr("value_ints"))) {
    std::vector<int64_t> i(a->ints().begin(), a->ints().end());
    c.set_output(0, onnx::TensorProto::INT64, {static_cast<int64_t>(i.size())});
    c.set_value(0, make_int_value(std::move(i)));
    return;
  }
  if ((a = c.attr("value_string"))) { c.set_output(0, onnx::TensorProto::STRING, {}); return; }
  if ((a = c.attr("value_strings"))) { c.set_output(0, onnx::TensorProto::STRING, {a->strings_size()}); return; }
  if ((a = c.attr("sparse_value"))) {
    c.set_output(0, a->sparse_tensor().values().data_type(), Shape(a->sparse_tensor().dims().begin(), a->sparse_tensor().dims().end()));
    return;
  }
  c.fail("Constant has no value attribute");
}

void infer_constant_of_shape(OpContext& c) {
  const std::vector<int64_t> shape = c.require_ints(0, "shape");
  int32_t dtype = onnx::TensorProto::FLOAT;
  double fill = 0;
  if (const auto* a = c.attr("value"); a && a->has_t()) {
    dtype = a->t().data_type();
    if (auto v = read_tensor_value(a->t(), 1); v && v->size() == 1) fill = v->as_double(0);
  }
  c.set_output(0, dtype, shape);
  const double n = element_count(shape);
  if (c.may_fold(n)) {
    if (dtype_is_float(dtype)) c.set_value(0, make_float_value(std::vector<double>(static_cast<size_t>(n), fill)));
    else c.set_value(0, make_int_value(std::vector<int64_t>(static_cast<size_t>(n), TensorValue::saturating_int(fill))));
  }
}

void infer_range(OpContext& c) {
  const TensorValue* start = c.value(0);
  const TensorValue* limit = c.value(1);
  const TensorValue* delta = c.value(2);
  if (!start || !limit || !delta || !start->size() || !limit->size() || !delta->size())
    throw NotInferable("Range start, limit and delta are not known at analysis time");
  const double s = start->as_double(0), l = limit->as_double(0), d = delta->as_double(0);
  if (d == 0) c.fail("Range delta is 0");
  const double count = std::ceil((l - s) / d);
  if (!(count < 9.2e18)) c.fail("Range of " + std::to_string(s) + " to " + std::to_string(l) + " step " + std::to_string(d) + " has no finite length");
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  c.set_output(0, c.in_dtype(0), {n});
  if (start->is_float != limit->is_float || start->is_float != delta->is_float) return;
  if (c.may_fold(static_cast<double>(n))) {
    if (start->is_float) {
      std::vector<double> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = s + d * i;
      c.set_value(0, make_float_value(std::move(v)));
    } else {
      std::vector<int64_t> v(n);
      try {
        for (int64_t i = 0; i < n; ++i) v[i] = checked_add(start->ints[0], checked_mul(delta->ints[0], i));
      } catch (const Unfoldable&) {
        return;
      }
      c.set_value(0, make_int_value(std::move(v)));
    }
  }
}

void infer_eye_like(OpContext& c) {
  if (c.in_rank(0) != 2) c.fail("EyeLike needs a 2-D input");
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", c.in_dtype(0))), c.in_shape(0));
}

void infer_random(OpContext& c) {
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", onnx::TensorProto::FLOAT)), c.attr_ints("shape"));
}

void infer_random_like(OpContext& c) {
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", c.in_dtype(0))), c.in_shape(0));
}

void infer_bernoulli(OpContext& c) {
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", c.in_dtype(0))), c.in_shape(0));
}

void infer_multinomial(OpContext& c) {
  const Shape& in = c.in_shape(0);
  if (in.size() != 2) c.fail("Multinomial needs [batch, classes] input");
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", onnx::TensorProto::INT32)), {in[0], c.attr_int("sample_size", 1)});
}

// Random number generation: a few flops per generated element (a Philox round is integer work;
// the float transform is counted).
OpCost cost_random(const OpContext& c) {
  OpCost cost;
  cost.flops = 2 * element_count(c.out(0).shape);
  return cost;
}

// Range: out[i] = start + i * delta, start and delta read from the inputs.
// A fill of the output (the analysis folds it where the shape is known and small enough).
OpPlan plan_constant_of_shape(const OpContext& c) {
  CopyPlan p;
  p.fill_output = true;
  if (const auto* a = c.attr("value"); a && a->has_t())
    if (auto v = read_tensor_value(a->t(), 1); v && v->size() == 1) p.fill_value = v->as_double(0);
  return p;
}

OpPlan plan_range(const OpContext& c) {
  RangePlan p;
  p.count = static_cast<int64_t>(element_count(c.out(0).shape));
  return p;
}

}  // namespace

void register_generator_ops(OpRegistry& r) {
  r.add(OpForm::kOther, {
      {"", "Constant", infer_constant, cost_data_movement, plan_reinterpret},
      {"", "ConstantOfShape", infer_constant_of_shape, cost_data_movement, plan_constant_of_shape},
      {"", "Range", infer_range, cost_per_output<1>, plan_range},
      {"", "EyeLike", infer_eye_like, cost_data_movement, not_measured("no GPU kernel yet")},
      {"", "RandomNormal", infer_random, cost_random, not_measured("random generator")},
      {"", "RandomUniform", infer_random, cost_random, not_measured("random generator")},
      {"", "RandomNormalLike", infer_random_like, cost_random, not_measured("random generator")},
      {"", "RandomUniformLike", infer_random_like, cost_random, not_measured("random generator")},
      {"", "Bernoulli", infer_bernoulli, cost_random, not_measured("random generator")},
      {"", "Multinomial", infer_multinomial, cost_random, not_measured("random generator")},
  });
}

}  // namespace modelcost
