// Plans of the tensor family's data movement, each a strided copy: Transpose, Slice, Concat,
// Split, Expand, constant Pad and Tile; the other Pad modes map each output element to its
// source (PadPlan). The rows of tensor.cpp name them; Slice and Pad
// read their amounts with the shape rule's readers.
#include "ops/defs/tensor_folding.h"
#include "ops/plan_helpers.h"

namespace modelcost {

OpPlan plan_transpose(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < in.size(); ++i) perm.push_back(static_cast<int64_t>(in.size() - 1 - i));
  StridedCopy copy;
  const auto src = contiguous_strides(in);
  copy.dims = c.out(0).shape;
  copy.dst_strides = contiguous_strides(copy.dims);
  for (int64_t axis : perm) copy.src_strides.push_back(src[static_cast<size_t>(normalize_axis(axis, in.size()))]);
  return copy_plan({copy});
}

OpPlan plan_slice(const OpContext& c) {
  const SliceSpec spec = read_slice(c);
  StridedCopy copy;
  copy.dims = c.out(0).shape;
  copy.dst_strides = contiguous_strides(copy.dims);
  copy.src_strides = contiguous_strides(c.in_shape(0));
  for (size_t axis = 0; axis < spec.start.size(); ++axis) {
    copy.src_offset += spec.start[axis] * copy.src_strides[axis];
    copy.src_strides[axis] *= spec.step[axis];
  }
  return copy_plan({copy});
}

OpPlan plan_concat(const OpContext& c) {
  const Shape& out = c.out(0).shape;
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), out.size());
  const auto out_strides = contiguous_strides(out);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    StridedCopy copy;
    copy.input = static_cast<int>(i);
    copy.dims = c.in_shape(i);
    copy.src_strides = contiguous_strides(copy.dims);
    copy.dst_strides = out_strides;
    copy.dst_offset = offset * out_strides[static_cast<size_t>(axis)];
    offset += copy.dims[static_cast<size_t>(axis)];
    if (element_count(copy.dims) > 0) copies.push_back(copy);
  }
  return copy_plan(copies);
}

OpPlan plan_split(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), in.size());
  const auto in_strides = contiguous_strides(in);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t o = 0; o < c.num_outputs(); ++o) {
    if (!c.has_output(o)) continue;
    StridedCopy copy;
    copy.output = static_cast<int>(o);
    copy.dims = c.out(o).shape;
    copy.src_strides = in_strides;
    copy.dst_strides = contiguous_strides(copy.dims);
    copy.src_offset = offset * in_strides[static_cast<size_t>(axis)];
    offset += copy.dims[static_cast<size_t>(axis)];
    copies.push_back(copy);
  }
  return copy_plan(copies);
}

OpPlan plan_expand(const OpContext& c) {
  StridedCopy copy;
  copy.dims = c.out(0).shape;
  copy.src_strides = broadcast_strides(c.in_shape(0), copy.dims);
  copy.dst_strides = contiguous_strides(copy.dims);
  return copy_plan({copy});
}

// Reflect, edge and wrap: an index map per dim.
OpPlan plan_pad_mapped(const OpContext& c, const std::string& mode, const PadSpec& spec) {
  PadPlan p;
  p.mode = mode == "reflect" ? PadPlan::Mode::kReflect : mode == "edge" ? PadPlan::Mode::kEdge : PadPlan::Mode::kWrap;
  p.in_dims = c.in_shape(0);
  p.out_dims = spec.out;
  p.begin = spec.begin;
  if (p.in_dims.size() > static_cast<size_t>(kMaxCopyRank)) return unsupported("Pad of rank above 8");
  for (size_t d = 0; d < p.in_dims.size(); ++d) {
    if (spec.begin[d] < 0 || spec.end[d] < 0) return unsupported("Pad with negative pads (cropping)");
    if (p.in_dims[d] == 0 && p.out_dims[d] > 0) return unsupported("Pad " + mode + " of an empty dim");
  }
  return p;
}

OpPlan plan_pad(const OpContext& c) {
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") return unsupported("Pad mode " + mode);
  const PadSpec spec = read_pad(c);
  if (mode != "constant") return plan_pad_mapped(c, mode, spec);
  double value = c.opset() < 11 ? c.attr_float("value", 0.f) : 0.0;
  if (c.opset() >= 11 && c.has_input(2) && !known_scalar(c, 2, &value)) value = 0;
  StridedCopy copy;
  const Shape& in = c.in_shape(0);
  copy.dims = in;
  copy.src_strides = contiguous_strides(in);
  copy.dst_strides = contiguous_strides(spec.out);
  for (size_t axis = 0; axis < in.size(); ++axis) {
    if (spec.begin[axis] < 0 || spec.end[axis] < 0) return unsupported("Pad with negative pads (cropping)");
    copy.dst_offset += spec.begin[axis] * copy.dst_strides[axis];
  }
  CopyPlan p = copy_plan({copy});
  p.fill_output = true;
  p.fill_value = value;
  return p;
}

// Tile as one strided copy over [repeat0, dim0, repeat1, dim1, ...]: the repeat dims read the
// source with stride 0 and step the destination by a whole input extent.
OpPlan plan_tile(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  const std::vector<int64_t> repeats = c.require_ints(1, "repeats");
  const auto src = contiguous_strides(in);
  const auto dst = contiguous_strides(c.out(0).shape);
  StridedCopy copy;
  for (size_t i = 0; i < in.size() && i < repeats.size(); ++i) {
    copy.dims.push_back(repeats[i]);
    copy.src_strides.push_back(0);
    copy.dst_strides.push_back(in[i] * dst[i]);
    copy.dims.push_back(in[i]);
    copy.src_strides.push_back(src[i]);
    copy.dst_strides.push_back(dst[i]);
  }
  CopyPlan p = copy_plan({copy});
  if (p.copies[0].dims.size() > static_cast<size_t>(kMaxCopyRank)) return unsupported("Tile of more than 4 repeated dims");
  return p;
}

// The output keeps the shape rule's bound (every element non-zero): the replay runs at that size.
OpPlan plan_nonzero(const OpContext& c) {
  NonZeroPlan p;
  p.dims = c.in_shape(0);
  p.capacity = c.out(0).shape[1];
  if (element_count(p.dims) >= static_cast<double>(int64_t{1} << 31)) return unsupported("NonZero of 2^31 elements or more");
  return p;
}

}  // namespace modelcost
