#include "ops/rule_helpers.h"

#include <algorithm>
#include <cstdint>

namespace modelcost {

Shape broadcast_shapes(const Shape& a, const Shape& b, const OpContext& c) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else c.fail("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
  }
  return out;
}

namespace {
Shape broadcast_all_inputs(const OpContext& c) {
  Shape out;
  bool first = true;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    out = first ? c.in_shape(i) : broadcast_shapes(out, c.in_shape(i), c);
    first = false;
  }
  return out;
}
}  // namespace

void infer_unary(OpContext& c) { c.set_output(0, c.in_dtype(0), c.in_shape(0)); }

void infer_broadcast(OpContext& c) { c.set_output(0, c.in_dtype(0), broadcast_all_inputs(c)); }

void infer_broadcast_bool(OpContext& c) {
  c.set_output(0, 9 /* BOOL */, broadcast_all_inputs(c));
}

void infer_passthrough(OpContext& c) {
  for (size_t i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.in_dtype(0), c.in_shape(0));
  c.set_value(0, c.shared_value(0));
}

bool computes_in_float(const OpContext& c) {
  if (c.has_input(0)) return dtype_is_float(c.in_dtype(0));
  return c.has_output(0) && dtype_is_float(c.out(0).dtype);
}

OpCost cost_data_movement(const OpContext&) { return {}; }

OpCost cost_selective_read(const OpContext& c) {
  OpCost cost;
  cost.bytes_read = 0;
  for (size_t i = 1; i < c.num_inputs(); ++i)
    if (c.has_input(i)) cost.bytes_read += element_count(c.in_shape(i)) * dtype_size(c.in_dtype(i));
  for (size_t i = 0; i < c.num_outputs(); ++i)
    if (c.has_output(i)) cost.bytes_read += element_count(c.out(i).shape) * dtype_size(c.in_dtype(0));
  return cost;
}

OpCost cost_reinterpret(const OpContext&) {
  OpCost cost;
  cost.moves_no_data = true;
  return cost;
}

std::vector<int64_t> strides_of(const Shape& shape) {
  // Unsigned: an empty tensor may have dims whose product wraps; its strides are never used.
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = static_cast<int64_t>(static_cast<uint64_t>(s[i]) * static_cast<uint64_t>(shape[i]));
  return s;
}

std::vector<int64_t> value_as_ints(const TensorValue& v) {
  std::vector<int64_t> out(v.size());
  try {
    for (size_t i = 0; i < v.size(); ++i) out[i] = v.is_float ? checked_int(v.floats[i]) : v.ints[i];
  } catch (const Unfoldable&) {
    throw NotInferable("a value that should be an integer is NaN or outside int64");
  }
  return out;
}

int64_t checked_dim(const OpContext& c, double value, const char* what) {
  if (!(value >= 0) || value > static_cast<double>(kMaxTensorDim))
    c.fail(std::string(what) + " would be " + (value != value ? std::string("NaN") : std::to_string(value)) +
           ", outside [0, 2^50]");
  return static_cast<int64_t>(value);
}

namespace {
[[noreturn]] void dim_out_of_range(const OpContext& c, const char* what) {
  c.fail(std::string(what) + " is negative or over 2^50");
}
}  // namespace

int64_t dim_product(const OpContext& c, int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > kMaxTensorDim) dim_out_of_range(c, what);
  return r;
}

int64_t dim_sum(const OpContext& c, int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r) || r > kMaxTensorDim) dim_out_of_range(c, what);
  return r;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Unfoldable{};
  return r;
}
int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw Unfoldable{};
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Unfoldable{};
  return r;
}
int64_t checked_div(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) throw Unfoldable{};
  return a / b;
}
int64_t checked_neg(int64_t a) {
  if (a == INT64_MIN) throw Unfoldable{};
  return -a;
}
int64_t checked_int(double x) {
  // [-2^63, 2^63): both bounds are exact doubles.
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) throw Unfoldable{};
  return static_cast<int64_t>(x);
}

TensorValue make_int_value(std::vector<int64_t> ints) {
  TensorValue v;
  v.ints = std::move(ints);
  return v;
}

TensorValue make_float_value(std::vector<double> floats) {
  TensorValue v;
  v.is_float = true;
  v.floats = std::move(floats);
  return v;
}

namespace {
// Index into an input of shape `in` broadcast to `out`, for flat output index k.
size_t broadcast_index(size_t k, const Shape& out, const Shape& in) {
  size_t idx = 0, in_stride = 1;
  size_t rem = k;
  std::vector<int64_t> coords(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    coords[d] = static_cast<int64_t>(rem % static_cast<size_t>(out[d]));
    rem /= static_cast<size_t>(out[d]);
  }
  for (size_t d = in.size(); d-- > 0;) {
    const size_t od = d + out.size() - in.size();
    if (in[d] != 1) idx += static_cast<size_t>(coords[od]) * in_stride;
    in_stride *= static_cast<size_t>(in[d]);
  }
  return idx;
}

template <typename Fn>
void fold_broadcast(OpContext& c, size_t n_inputs, Fn&& fn) {
  if (!c.has_output(0) || !c.out(0).has_shape) return;
  for (size_t i = 0; i < n_inputs; ++i)
    if (!c.value(i)) return;
  const Shape& out = c.out(0).shape;
  const double n = element_count(out);
  if (!c.may_fold(n)) return;
  try {
    fn(out, static_cast<size_t>(n));
  } catch (const Unfoldable&) {
  }
}
}  // namespace

void fold_unary(OpContext& c, const std::function<double(double)>& f_float,
                const std::function<int64_t(int64_t)>& f_int) {
  fold_broadcast(c, 1, [&](const Shape&, size_t n) {
    const TensorValue& a = *c.value(0);
    if (a.size() != n) return;
    const bool as_float = dtype_is_float(c.out(0).dtype);
    if (as_float ? !f_float : (!f_int && !f_float)) return;
    TensorValue v;
    v.is_float = as_float;
    for (size_t k = 0; k < n; ++k) {
      if (as_float) v.floats.push_back(f_float(a.as_double(k)));
      else v.ints.push_back(f_int ? f_int(a.as_int(k)) : checked_int(f_float(a.as_double(k))));
    }
    c.set_value(0, std::move(v));
  });
}

void fold_binary(OpContext& c, const std::function<double(double, double)>& f_float,
                 const std::function<int64_t(int64_t, int64_t)>& f_int) {
  fold_broadcast(c, 2, [&](const Shape& out, size_t n) {
    const TensorValue& a = *c.value(0);
    const TensorValue& b = *c.value(1);
    if (a.size() != element_count(c.in_shape(0)) || b.size() != element_count(c.in_shape(1))) return;
    // Integer and float contents together break the op's type constraint: no value is made by
    // truncating one side (the value is left unknown; validation warns about the types).
    if (a.is_float != b.is_float) return;
    const bool as_float = dtype_is_float(c.out(0).dtype);
    if (as_float ? !f_float : !f_int) return;
    TensorValue v;
    v.is_float = as_float;
    for (size_t k = 0; k < n; ++k) {
      const size_t ia = broadcast_index(k, out, c.in_shape(0)), ib = broadcast_index(k, out, c.in_shape(1));
      if (as_float) v.floats.push_back(f_float(a.as_double(ia), b.as_double(ib)));
      else v.ints.push_back(f_int(a.as_int(ia), b.as_int(ib)));
    }
    c.set_value(0, std::move(v));
  });
}

void fold_compare(OpContext& c, const std::function<bool(double, double)>& f) {
  fold_broadcast(c, 2, [&](const Shape& out, size_t n) {
    const TensorValue& a = *c.value(0);
    const TensorValue& b = *c.value(1);
    if (a.size() != element_count(c.in_shape(0)) || b.size() != element_count(c.in_shape(1))) return;
    TensorValue v;
    for (size_t k = 0; k < n; ++k)
      v.ints.push_back(f(a.as_double(broadcast_index(k, out, c.in_shape(0))),
                         b.as_double(broadcast_index(k, out, c.in_shape(1)))));
    c.set_value(0, std::move(v));
  });
}

}  // namespace modelcost
