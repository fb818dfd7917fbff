#include "ops/plan_helpers.h"

namespace modelcost {

UnsupportedPlan unsupported(const std::string& why) { return UnsupportedPlan{why}; }

int64_t normalize_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

int64_t extent_product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

std::vector<int64_t> known_ints(const OpContext& c, size_t i, bool* ok) {
  if (!c.has_input(i)) return {};
  const TensorValue* v = c.value(i);
  if (!v) { *ok = false; return {}; }
  std::vector<int64_t> out;
  for (size_t k = 0; k < v->size(); ++k) out.push_back(v->as_int(k));
  return out;
}

bool known_scalar(const OpContext& c, size_t i, double* out) {
  const TensorValue* v = c.value(i);
  if (!v || v->size() != 1) return false;
  *out = v->as_double(0);
  return true;
}

bool float_data(const OpContext& c) {
  if (!c.has_input(0) || !dtype_is_float(c.in_dtype(0))) return false;
  for (size_t o = 0; o < c.num_outputs(); ++o)
    if (c.has_output(o) && !dtype_is_float(c.out(o).dtype)) return false;
  return true;
}

RowView row_view(const Shape& shape, int64_t first, int64_t last) {
  RowView v;
  v.outer = extent_product(shape, 0, static_cast<size_t>(first));
  v.axis_len = extent_product(shape, static_cast<size_t>(first), static_cast<size_t>(last + 1));
  v.inner = extent_product(shape, static_cast<size_t>(last + 1), shape.size());
  return v;
}

CopyPlan copy_plan(std::vector<StridedCopy> copies) {
  CopyPlan p;
  for (auto& c : copies) c.merge_dims();
  p.copies = std::move(copies);
  return p;
}

OpPlan matmul_plan(Shape a, Shape b) {
  if (a.empty() || b.empty()) return unsupported("MatMul of a scalar");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulParams m;
  m.m = a[a.size() - 2];
  m.k = a.back();
  m.n = b.back();
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const int64_t a_count = extent_product(a_batch, 0, a_batch.size()), b_count = extent_product(b_batch, 0, b_batch.size());
  if (b_count == 1) {
    m.m *= a_count;  // B shared by every batch: one larger product
  } else if (a_count == 1) {
    m.batch = b_count;
    m.b_batch_stride = m.k * m.n;
  } else {
    Shape pa = a_batch, pb = b_batch;
    while (pa.size() < pb.size()) pa.insert(pa.begin(), 1);
    while (pb.size() < pa.size()) pb.insert(pb.begin(), 1);
    if (pa != pb) return unsupported("MatMul broadcasting batch dims of both inputs");
    m.batch = a_count;
    m.a_batch_stride = m.m * m.k;
    m.b_batch_stride = m.k * m.n;
  }
  return m;
}

OpPlan plan_reinterpret(const OpContext&) { return ZeroCostPlan{"reinterprets its input; moves no data"}; }

}  // namespace modelcost
