#include "ops/measured_kinds.h"

#include <algorithm>

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

int64_t IndexedPlan::smallest_indexed_dim() const {
  if (kind == Kind::kGatherElements || kind == Kind::kScatterElements) return axis_len;
  int64_t smallest = tuple_dims.empty() ? 1 : tuple_dims[0];
  for (int64_t d : tuple_dims) smallest = std::min(smallest, d);
  return smallest;
}

std::string plan_reason(const OpPlan& plan) {
  if (auto* z = std::get_if<ZeroCostPlan>(&plan)) return z->reason;
  if (auto* u = std::get_if<UnsupportedPlan>(&plan)) return u->reason;
  return "";
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

int64_t row_stride(const std::vector<int64_t>& strides, const Shape& target, size_t lead) {
  int64_t stride = -1, expected = -1;
  for (size_t d = target.size(); d-- > lead;) {
    if (target[d] == 1) continue;
    if (stride < 0) {
      stride = expected = strides[d];
    } else if (strides[d] != expected) {
      return -1;
    }
    expected *= target[d];
  }
  return stride < 0 ? 0 : stride;
}

}  // namespace modelcost
