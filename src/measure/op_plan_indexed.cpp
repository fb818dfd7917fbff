// Plans of indexed element access (GatherElements, ScatterElements, GatherND, ScatterND) and of
// Range.
#include <algorithm>

#include "measure/op_plan_internal.h"

namespace modelcost {

int64_t IndexedPlan::smallest_indexed_dim() const {
  if (kind == Kind::kGatherElements || kind == Kind::kScatterElements) return axis_len;
  int64_t smallest = tuple_dims.empty() ? 1 : tuple_dims[0];
  for (int64_t d : tuple_dims) smallest = std::min(smallest, d);
  return smallest;
}

namespace plan_detail {
namespace {

bool integer_indices(const NodeSpec& s) { return s.in(1).dtype == 7 || s.in(1).dtype == 6; }

OpPlan elements_plan(const NodeSpec& s, IndexedPlan::Kind kind) {
  if (!integer_indices(s)) return unsupported(s.op_type + " indices neither int64 nor int32");
  const Shape& data = s.in(0).shape;
  const Shape& indices = s.in(1).shape;
  if (data.empty() || indices.size() != data.size()) return unsupported(s.op_type + " indices of another rank than data");
  if (kind == IndexedPlan::Kind::kScatterElements && s.attributes.get_string("reduction", "none") != "none")
    return unsupported("ScatterElements with reduction " + s.attributes.get_string("reduction", ""));
  IndexedPlan p;
  p.kind = kind;
  p.index_dims = indices;
  p.data_strides = contiguous_strides(data);
  p.axis = normalize_axis(s.attributes.get_int("axis", 0), data.size());
  p.axis_len = data[static_cast<size_t>(p.axis)];
  return p;
}

// Folds the leading `batch_dims` dims and the index tuples of width k of an ND gather or scatter.
OpPlan nd_plan(const NodeSpec& s, IndexedPlan::Kind kind, int64_t batch_dims) {
  if (!integer_indices(s)) return unsupported(s.op_type + " indices neither int64 nor int32");
  const Shape& data = s.in(0).shape;
  const Shape& indices = s.in(1).shape;
  if (indices.empty()) return unsupported(s.op_type + " of scalar indices");
  const int64_t k = indices.back();
  const auto b = static_cast<size_t>(batch_dims);
  if (b + static_cast<size_t>(k) > data.size() || b + 1 > indices.size() || k < 1)
    return unsupported(s.op_type + " index tuples longer than the data's rank");
  IndexedPlan p;
  p.kind = kind;
  const auto strides = contiguous_strides(data);
  p.batch = product(data, 0, b);
  p.batch_stride = product(data, b, data.size());
  p.tuples = product(indices, b, indices.size() - 1);
  p.slice = product(data, b + static_cast<size_t>(k), data.size());
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    p.tuple_dims.push_back(data[b + j]);
    p.tuple_strides.push_back(strides[b + j]);
  }
  return p;
}

}  // namespace

OpPlan plan_gather_elements(const NodeSpec& s) { return elements_plan(s, IndexedPlan::Kind::kGatherElements); }
OpPlan plan_scatter_elements(const NodeSpec& s) { return elements_plan(s, IndexedPlan::Kind::kScatterElements); }

OpPlan plan_gather_nd(const NodeSpec& s) {
  return nd_plan(s, IndexedPlan::Kind::kGatherND, s.attributes.get_int("batch_dims", 0));
}

OpPlan plan_scatter_nd(const NodeSpec& s) {
  if (s.attributes.get_string("reduction", "none") != "none")
    return unsupported("ScatterND with reduction " + s.attributes.get_string("reduction", ""));
  return nd_plan(s, IndexedPlan::Kind::kScatterND, 0);
}

OpPlan plan_range(const NodeSpec& s) {
  RangePlan p;
  p.count = static_cast<int64_t>(s.outputs[0].elements());
  return p;
}

}  // namespace plan_detail
}  // namespace modelcost
