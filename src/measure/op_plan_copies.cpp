// Plans of data movement as strided copies: Transpose, Slice, Concat, Split, Gather, Expand, Pad, Tile.
#include "measure/op_plan_internal.h"

#include <algorithm>

namespace modelcost::plan_detail {

OpPlan copy_plan(std::vector<StridedCopy> copies) {
  CopyPlan p;
  for (auto& c : copies) c.merge_dims();
  p.copies = std::move(copies);
  return p;
}

OpPlan plan_transpose(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  std::vector<int64_t> perm = s.attributes.get_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < in.size(); ++i) perm.push_back(static_cast<int64_t>(in.size() - 1 - i));
  StridedCopy c;
  const auto src = contiguous_strides(in);
  c.dims = s.outputs[0].shape;
  c.dst_strides = contiguous_strides(c.dims);
  for (int64_t axis : perm) c.src_strides.push_back(src[normalize_axis(axis, in.size())]);
  return copy_plan({c});
}

OpPlan plan_slice(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  std::vector<int64_t> starts, axes, steps;
  bool ok = true;
  if (s.opset < 10) {
    starts = s.attributes.get_ints("starts");
    axes = s.attributes.get_ints("axes");
  } else {
    starts = known_ints(s.in(1), &ok);
    axes = known_ints(s.in(3), &ok);
    steps = known_ints(s.in(4), &ok);
    if (!ok) return unsupported("Slice parameters not known at analysis time");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  StridedCopy c;
  c.dims = s.outputs[0].shape;
  c.dst_strides = contiguous_strides(c.dims);
  c.src_strides = contiguous_strides(in);
  for (size_t i = 0; i < axes.size() && i < starts.size(); ++i) {
    const int64_t axis = normalize_axis(axes[i], in.size());
    const int64_t dim = in[axis];
    const int64_t step = i < steps.size() ? steps[i] : 1;
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    c.src_offset += start * c.src_strides[axis];
    c.src_strides[axis] *= step;
  }
  return copy_plan({c});
}

OpPlan plan_concat(const NodeSpec& s) {
  const Shape& out = s.outputs[0].shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", 0), out.size());
  const auto out_strides = contiguous_strides(out);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (!s.has_input(i)) continue;
    StridedCopy c;
    c.input = static_cast<int>(i);
    c.dims = s.in(i).shape;
    c.src_strides = contiguous_strides(c.dims);
    c.dst_strides = out_strides;
    c.dst_offset = offset * out_strides[axis];
    offset += c.dims[axis];
    if (element_count(c.dims) > 0) copies.push_back(c);
  }
  return copy_plan(copies);
}

OpPlan plan_split(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", 0), in.size());
  const auto in_strides = contiguous_strides(in);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (!s.outputs[o].present) continue;
    StridedCopy c;
    c.output = static_cast<int>(o);
    c.dims = s.outputs[o].shape;
    c.src_strides = in_strides;
    c.dst_strides = contiguous_strides(c.dims);
    c.src_offset = offset * in_strides[axis];
    offset += c.dims[axis];
    copies.push_back(c);
  }
  return copy_plan(copies);
}

OpPlan plan_gather(const NodeSpec& s) {
  const Shape& data = s.in(0).shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", 0), data.size());
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) return unsupported("Gather axis out of range");
  const TensorSpec& indices = s.in(1);
  double index = 0;
  if (indices.shape.empty() && known_scalar(indices, &index)) {
    // A constant scalar index selects one slice: a strided copy.
    StridedCopy c;
    const auto src = contiguous_strides(data);
    int64_t i = static_cast<int64_t>(index);
    if (i < 0) i += data[axis];
    c.src_offset = i * src[axis];
    for (size_t d = 0; d < data.size(); ++d)
      if (static_cast<int64_t>(d) != axis) { c.dims.push_back(data[d]); c.src_strides.push_back(src[d]); }
    c.dst_strides = contiguous_strides(c.dims);
    return copy_plan({c});
  }
  if (indices.dtype != 7 && indices.dtype != 6) return unsupported("Gather indices neither int64 nor int32");
  GatherPlan p;
  static_cast<RowView&>(p) = row_view(data, axis, axis);
  p.indices = static_cast<int64_t>(element_count(indices.shape));
  return p;
}

OpPlan plan_expand(const NodeSpec& s) {
  StridedCopy c;
  c.dims = s.outputs[0].shape;
  c.src_strides = broadcast_strides(s.in(0).shape, c.dims);
  c.dst_strides = contiguous_strides(c.dims);
  return copy_plan({c});
}

OpPlan plan_pad(const NodeSpec& s) {
  const std::string mode = s.attributes.get_string("mode", "constant");
  if (mode != "constant") return unsupported("Pad mode " + mode);
  const Shape& in = s.in(0).shape;
  std::vector<int64_t> pads, axes;
  double value = 0;
  bool ok = true;
  if (s.opset < 11) {
    pads = s.attributes.get_ints("pads");
    value = s.attributes.get_float("value", 0);
  } else {
    pads = known_ints(s.in(1), &ok);
    axes = known_ints(s.in(3), &ok);
    if (!ok) return unsupported("Pad amounts not known at analysis time");
    if (s.has_input(2) && !known_scalar(s.in(2), &value)) value = 0;
  }
  if (axes.empty())
    for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (pads.size() != 2 * axes.size()) return unsupported("Pad: pads do not match the axes");
  StridedCopy c;
  c.dims = in;
  c.src_strides = contiguous_strides(in);
  c.dst_strides = contiguous_strides(s.outputs[0].shape);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (pads[i] < 0 || pads[i + axes.size()] < 0) return unsupported("Pad with negative pads (cropping)");
    c.dst_offset += pads[i] * c.dst_strides[normalize_axis(axes[i], in.size())];
  }
  OpPlan p = copy_plan({c});
  std::get<CopyPlan>(p).fill_output = true;
  std::get<CopyPlan>(p).fill_value = value;
  return p;
}

// Tile as one strided copy over [repeat0, dim0, repeat1, dim1, ...]: the repeat dims read the
// source with stride 0 and step the destination by a whole input extent.
OpPlan plan_tile(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  bool ok = true;
  const std::vector<int64_t> repeats = known_ints(s.in(1), &ok);
  if (!ok || repeats.size() != in.size()) return unsupported("Tile repeats not known at analysis time");
  const auto src = contiguous_strides(in);
  const auto dst = contiguous_strides(s.outputs[0].shape);
  StridedCopy c;
  for (size_t i = 0; i < in.size(); ++i) {
    c.dims.push_back(repeats[i]);
    c.src_strides.push_back(0);
    c.dst_strides.push_back(in[i] * dst[i]);
    c.dims.push_back(in[i]);
    c.src_strides.push_back(src[i]);
    c.dst_strides.push_back(dst[i]);
  }
  OpPlan p = copy_plan({c});
  if (std::get<CopyPlan>(p).copies[0].dims.size() > static_cast<size_t>(kMaxCopyRank)) return unsupported("Tile of more than 4 repeated dims");
  return p;
}


}  // namespace modelcost::plan_detail
