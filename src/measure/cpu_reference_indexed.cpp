// Reference gathers and scatters by index tensors: GatherElements, ScatterElements, GatherND,
// ScatterND (negative indices count from the end, as ONNX says; out-of-range ones throw); TopK
// and the index-mapped Pad modes.
#include <algorithm>

#include "measure/cpu_reference.h"
#include "modelcost/errors.h"

namespace modelcost {
namespace {

int64_t wrap_index(float raw, int64_t dim) {
  auto k = static_cast<int64_t>(raw);
  if (k < 0) k += dim;
  if (k < 0 || k >= dim) throw Error(kExitRuntime, "index " + std::to_string(static_cast<int64_t>(raw)) + " out of range");
  return k;
}

// Element i of the index iteration (row-major over index_dims) as an offset into the data,
// with its coordinate on the axis replaced by the index.
int64_t element_offset(const IndexedPlan& p, int64_t i, float index) {
  int64_t offset = 0;
  for (int d = static_cast<int>(p.index_dims.size()) - 1; d >= 0; --d) {
    const int64_t coordinate = i % p.index_dims[d];
    i /= p.index_dims[d];
    offset += (d == p.axis ? wrap_index(index, p.axis_len) : coordinate) * p.data_strides[d];
  }
  return offset;
}

// Offset into the data of tuple t of batch b.
int64_t tuple_offset(const IndexedPlan& p, const HostTensor& indices, int64_t b, int64_t t) {
  const auto k = static_cast<int64_t>(p.tuple_dims.size());
  int64_t offset = b * p.batch_stride;
  for (int64_t j = 0; j < k; ++j)
    offset += wrap_index(indices.data[(b * p.tuples + t) * k + j], p.tuple_dims[j]) * p.tuple_strides[j];
  return offset;
}

}  // namespace

void cpu_indexed(const IndexedPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  using Kind = IndexedPlan::Kind;
  const HostTensor& data = *in[0];
  const HostTensor& indices = *in[1];
  const bool scatter = p.kind == Kind::kScatterElements || p.kind == Kind::kScatterND;
  if (scatter) y.data = data.data;
  if (p.kind == Kind::kGatherElements || p.kind == Kind::kScatterElements) {
    for (size_t i = 0; i < indices.data.size(); ++i) {
      const int64_t at = element_offset(p, static_cast<int64_t>(i), indices.data[i]);
      if (scatter) y.data[at] = in[2]->data[i];
      else y.data[i] = data.data[at];
    }
    return;
  }
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t t = 0; t < p.tuples; ++t) {
      const int64_t at = tuple_offset(p, indices, b, t), row = (b * p.tuples + t) * p.slice;
      for (int64_t e = 0; e < p.slice; ++e) {
        if (scatter) y.data[at + e] = in[2]->data[row + e];
        else y.data[row + e] = data.data[at + e];
      }
    }
}

}  // namespace modelcost

namespace modelcost {

void cpu_topk(const TopKPlan& p, const HostTensor& x, HostTensor& values, HostTensor* indices) {
  std::vector<int64_t> order(static_cast<size_t>(p.axis_len));
  for (int64_t row = 0; row < p.outer; ++row) {
    const float* v = &x.data[static_cast<size_t>(row * p.axis_len)];
    for (int64_t i = 0; i < p.axis_len; ++i) order[static_cast<size_t>(i)] = i;
    // Stable: of equal values the lower index comes first, as ONNX asks.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p.largest ? v[a] > v[b] : v[a] < v[b]; });
    for (int64_t j = 0; j < p.k; ++j) {
      values.data[static_cast<size_t>(row * p.k + j)] = v[order[static_cast<size_t>(j)]];
      if (indices) indices->data[static_cast<size_t>(row * p.k + j)] = static_cast<float>(order[static_cast<size_t>(j)]);
    }
  }
}

int64_t pad_source(PadPlan::Mode mode, int64_t o, int64_t n) {
  switch (mode) {
    case PadPlan::Mode::kEdge: return std::clamp<int64_t>(o, 0, n - 1);
    case PadPlan::Mode::kWrap: return ((o % n) + n) % n;
    case PadPlan::Mode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t m = ((o % period) + period) % period;
      return m < n ? m : period - m;
    }
  }
  return 0;
}

void cpu_pad(const PadPlan& p, const HostTensor& x, HostTensor& y) {
  const size_t rank = p.out_dims.size();
  const std::vector<int64_t> in_strides = contiguous_strides(p.in_dims);
  for (size_t i = 0; i < y.data.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), offset = 0;
    for (size_t d = rank; d-- > 0;) {
      const int64_t o = rest % p.out_dims[d] - p.begin[d];
      rest /= p.out_dims[d];
      offset += pad_source(p.mode, o, p.in_dims[d]) * in_strides[d];
    }
    y.data[i] = x.data[static_cast<size_t>(offset)];
  }
}

}  // namespace modelcost
