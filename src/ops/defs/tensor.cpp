// Op rules: tensor family (ai.onnx), layout and shape ops: Shape, Size, Cast, Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Concat, Split, Slice, Transpose, Expand, Tile, Pad, DepthToSpace,
// SpaceToDepth, Trilu. Indexing ops are in tensor_indexing.cpp. These ops do no arithmetic;
// buffer reinterpretations move no bytes. Formulas: docs/ops/tensor.md.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "ops/defs/tensor_folding.h"
#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {

void register_tensor_indexing_ops(OpRegistry& r);

namespace {

void pass_value(OpContext& c) {
  c.set_value(0, c.shared_value(0));
}

void infer_identity(OpContext& c) { infer_passthrough(c); }

void infer_shape(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(in.begin() + start, in.begin() + end);
  c.set_output(0, onnx::TensorProto::INT64, {static_cast<int64_t>(dims.size())});
  c.set_value(0, make_int_value(std::move(dims)));
}

void infer_size(OpContext& c) {
  c.set_output(0, onnx::TensorProto::INT64, {});
  c.set_value(0, make_int_value({static_cast<int64_t>(element_count(c.in_shape(0)))}));
}

void cast_value(OpContext& c, int32_t to) {
  const TensorValue* v = c.value(0);
  if (!v) return;
  if (dtype_is_float(to)) {
    std::vector<double> f(v->size());
    for (size_t i = 0; i < v->size(); ++i) f[i] = v->as_double(i);
    c.set_value(0, make_float_value(std::move(f)));
  } else {
    std::vector<int64_t> i(v->size());
    try {
      for (size_t k = 0; k < v->size(); ++k)
        i[k] = to == onnx::TensorProto::BOOL ? (v->as_double(k) != 0) : v->is_float ? checked_int(v->floats[k]) : v->ints[k];
    } catch (const Unfoldable&) {
      return;  // NaN or out of int64: the result is unspecified, so unknown
    }
    c.set_value(0, make_int_value(std::move(i)));
  }
}

void infer_cast(OpContext& c) {
  const int32_t to = static_cast<int32_t>(c.attr_int("to", 0));
  if (to <= 0 || std::string(dtype_name(to)) == "undefined") c.fail("Cast needs a valid 'to' dtype, got " + std::to_string(to));
  c.set_output(0, to, c.in_shape(0));
  cast_value(c, to);
}

void infer_cast_like(OpContext& c) {
  c.set_output(0, c.in_dtype(1), c.in_shape(0));
  cast_value(c, c.in_dtype(1));
}

void infer_reshape(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> target = c.opset() < 5 ? c.attr_ints("shape") : c.require_ints(1, "target shape");
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  int infer_at = -1;
  double known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size()) c.fail("shape " + shape_to_string(target) + " copies dim " + std::to_string(i) + " that " + shape_to_string(in) + " lacks");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) c.fail("shape " + shape_to_string(target) + " has more than one -1");
      infer_at = static_cast<int>(i);
    } else if (target[i] < 0) {
      c.fail("shape " + shape_to_string(target) + " has a negative dim");
    } else {
      known *= static_cast<double>(target[i]);
    }
  }
  const double total = element_count(in);
  if (infer_at >= 0) {
    if (known == 0 || std::fmod(total, known) != 0)
      c.fail("cannot reshape " + shape_to_string(in) + " to " + shape_to_string(target));
    target[infer_at] = static_cast<int64_t>(total / known);
  } else if (known != total) {
    c.fail("cannot reshape " + shape_to_string(in) + " (" + std::to_string(static_cast<int64_t>(total)) + " elements) to " + shape_to_string(target));
  }
  c.set_output(0, c.in_dtype(0), target);
  pass_value(c);
}

void infer_flatten(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -rank || axis > rank) c.fail("axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  const double outer = element_count(Shape(in.begin(), in.begin() + axis));
  const double inner = element_count(Shape(in.begin() + axis, in.end()));
  c.set_output(0, c.in_dtype(0), {checked_dim(c, outer, "the outer dim"), checked_dim(c, inner, "the inner dim")});
  pass_value(c);
}

std::vector<int64_t> axes_of(OpContext& c, size_t input_index, int since_input_opset) {
  if (c.opset() < since_input_opset) return c.attr_ints("axes");
  if (!c.has_input(input_index)) return {};
  return c.require_ints(input_index, "axes");
}

void infer_squeeze(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> axes = axes_of(c, 1, 13);
  std::vector<bool> drop(in.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t ax = c.axis(a, in.size());
      if (in[ax] != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[ax]));
      drop[ax] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) if (!drop[i]) out.push_back(in[i]);
  c.set_output(0, c.in_dtype(0), out);
  pass_value(c);
}

void infer_unsqueeze(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> axes = axes_of(c, 1, 13);
  if (axes.empty()) c.fail("Unsqueeze needs axes");
  const size_t rank = in.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t ax = c.axis(a, rank);
    if (inserted[ax]) c.fail("axis " + std::to_string(a) + " repeated");
    inserted[ax] = true;
  }
  Shape out;
  size_t k = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[k++]);
  c.set_output(0, c.in_dtype(0), out);
  pass_value(c);
}

void infer_concat(OpContext& c) {
  const Shape& first = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), first.size());
  Shape out = first;
  out[axis] = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    const Shape& s = c.in_shape(i);
    if (s.size() != first.size()) c.fail("inputs have ranks " + std::to_string(first.size()) + " and " + std::to_string(s.size()));
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis && s[d] != first[d])
        c.fail("input shapes " + shape_to_string(first) + " and " + shape_to_string(s) + " differ off the axis");
    out[axis] = checked_dim(c, static_cast<double>(out[axis]) + static_cast<double>(s[axis]), "the concatenated axis");
  }
  c.set_output(0, c.in_dtype(0), out);
  fold_concat(c, axis);
}

void infer_split(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), in.size());
  const size_t n = c.num_outputs();
  std::vector<int64_t> sizes;
  if (c.opset() < 13) sizes = c.attr_ints("split");
  else if (c.has_input(1)) sizes = c.require_ints(1, "split");
  if (sizes.empty()) {
    // Equal parts; opset 18's num_outputs lets the last part be smaller.
    const int64_t parts = c.opset() >= 18 && c.has_attr("num_outputs") ? c.attr_int("num_outputs", 1) : static_cast<int64_t>(n);
    if (parts <= 0 || static_cast<size_t>(parts) != n)
      c.fail("num_outputs = " + std::to_string(parts) + " for a node with " + std::to_string(n) + " outputs");
    const int64_t each = (in[axis] + parts - 1) / parts;
    if (c.opset() < 18 && in[axis] % parts != 0)
      c.fail("axis of size " + std::to_string(in[axis]) + " does not split into " + std::to_string(parts) + " equal parts");
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, in[axis] - i * each));
  }
  if (sizes.size() != n) c.fail(std::to_string(sizes.size()) + " split sizes for " + std::to_string(n) + " outputs");
  for (int64_t s : sizes)
    if (s < 0 || s > in[axis]) c.fail("split size " + std::to_string(s) + " is outside the axis of " + std::to_string(in[axis]));
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != in[axis]) c.fail("split sizes do not add up to the axis");
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    Shape out = in;
    out[axis] = sizes[i];
    c.set_output(i, c.in_dtype(0), out);
    fold_slice_axis(c, i, axis, offset, sizes[i]);
    offset += sizes[i];
  }
}

}  // namespace

SliceSpec read_slice(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.require_ints(1, "starts");
    ends = c.require_ints(2, "ends");
    if (c.has_input(3)) axes = c.require_ints(3, "axes");
    if (c.has_input(4)) steps = c.require_ints(4, "steps");
  }
  if (starts.size() != ends.size()) c.fail("starts and ends differ in length");
  if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) c.fail("starts, ends, axes and steps differ in length");
  SliceSpec spec;
  spec.start.assign(in.size(), 0);
  spec.step.assign(in.size(), 1);
  spec.out = in;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t ax = c.axis(axes[i], in.size());
    const int64_t dim = in[ax], step = steps[i];
    if (step == 0) c.fail("slice step is 0");
    auto clamp_index = [&](int64_t v, bool is_end) {
      if (v < 0) v += dim;
      if (step > 0) return std::clamp<int64_t>(v, 0, dim);
      return std::clamp<int64_t>(v, -1, dim - 1);
      (void)is_end;
    };
    int64_t s = starts[i], e = ends[i];
    // INT64_MAX/MIN sentinels survive the clamp without overflow.
    s = s <= INT64_MIN / 2 ? (step > 0 ? 0 : -1) : s >= INT64_MAX / 2 ? (step > 0 ? dim : dim - 1) : clamp_index(s, false);
    e = e <= INT64_MIN / 2 ? (step > 0 ? 0 : -1) : e >= INT64_MAX / 2 ? (step > 0 ? dim : dim - 1) : clamp_index(e, true);
    // A step longer than the axis takes one element: capping it keeps the arithmetic in int64.
    const int64_t stride = std::min<int64_t>(step > 0 ? step : step == INT64_MIN ? INT64_MAX : -step, dim + 1);
    const int64_t len = step > 0 ? (e > s ? (e - s + stride - 1) / stride : 0) : (s > e ? (s - e + stride - 1) / stride : 0);
    spec.start[ax] = s;
    spec.step[ax] = step;
    spec.out[ax] = len;
  }
  return spec;
}

PadSpec read_pad(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  PadSpec spec;
  std::vector<int64_t> pads = c.opset() < 11 ? c.attr_ints(c.opset() < 2 ? "paddings" : "pads") : c.require_ints(1, "pads");
  std::vector<int64_t> axes;
  if (c.opset() >= 18 && c.has_input(3)) axes = c.require_ints(3, "axes");
  if (axes.empty()) for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (pads.size() != 2 * axes.size()) c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  spec.begin.assign(in.size(), 0);
  spec.end.assign(in.size(), 0);
  spec.out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = c.axis(axes[i], in.size());
    spec.begin[ax] = pads[i];
    spec.end[ax] = pads[i + axes.size()];
    if (__builtin_add_overflow(spec.out[ax], pads[i], &spec.out[ax]) ||
        __builtin_add_overflow(spec.out[ax], pads[i + axes.size()], &spec.out[ax]))
      c.fail("pads overflow axis " + std::to_string(ax));
    if (spec.out[ax] < 0) c.fail("pads make axis " + std::to_string(ax) + " negative");
  }
  return spec;
}

namespace {

void infer_slice(OpContext& c) {
  const SliceSpec spec = read_slice(c);
  c.set_output(0, c.in_dtype(0), spec.out);
  fold_slice(c, spec);
}

void infer_transpose(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty()) for (size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != in.size()) c.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(in.size()));
  std::vector<bool> seen(in.size(), false);
  Shape out;
  for (int64_t p : perm) {
    const int64_t ax = c.axis(p, in.size());
    if (seen[ax]) c.fail("perm repeats axis " + std::to_string(p));
    seen[ax] = true;
    out.push_back(in[ax]);
  }
  c.set_output(0, c.in_dtype(0), out);
  fold_transpose(c, perm);
}

void infer_expand(OpContext& c) {
  const std::vector<int64_t> target = c.require_ints(1, "shape");
  c.set_output(0, c.in_dtype(0), broadcast_shapes(c.in_shape(0), target, c));
  fold_broadcast_copy(c);
}

void infer_tile(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const std::vector<int64_t> repeats = c.require_ints(1, "repeats");
  if (repeats.size() != in.size()) c.fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " + std::to_string(in.size()));
  Shape out = in;
  for (size_t i = 0; i < in.size(); ++i) {
    if (repeats[i] < 0) c.fail("negative repeat");
    if (__builtin_mul_overflow(out[i], repeats[i], &out[i])) c.fail("repeats overflow axis " + std::to_string(i));
  }
  c.set_output(0, c.in_dtype(0), out);
  fold_tile(c);
}

void infer_pad(OpContext& c) {
  c.set_output(0, c.in_dtype(0), read_pad(c).out);
}

void infer_depth_to_space(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t b = c.attr_int("blocksize", 0);
  // in[1] / b >= b keeps b * b from overflowing (a wrapped 0 would divide by zero).
  if (in.size() != 4 || b <= 0 || in[1] / b < b || in[1] % (b * b) != 0) c.fail("needs NCHW input with C divisible by blocksize^2");
  const auto scaled = [&](int64_t d) { return checked_dim(c, static_cast<double>(d) * static_cast<double>(b), "a spatial dim"); };
  c.set_output(0, c.in_dtype(0), {in[0], in[1] / (b * b), scaled(in[2]), scaled(in[3])});
}

void infer_space_to_depth(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t b = c.attr_int("blocksize", 0);
  if (in.size() != 4 || b <= 0 || in[2] % b != 0 || in[3] % b != 0) c.fail("needs NCHW input with H, W divisible by blocksize");
  const double depth = static_cast<double>(in[1]) * static_cast<double>(b) * static_cast<double>(b);
  c.set_output(0, c.in_dtype(0), {in[0], checked_dim(c, depth, "the channel dim"), in[2] / b, in[3] / b});
}

void infer_trilu(OpContext& c) {
  if (c.in_rank(0) < 2) c.fail("Trilu needs rank >= 2");
  infer_unary(c);
}

}  // namespace

void register_tensor_ops(OpRegistry& r) {
  r.add(OpTraits(OpForm::kPointwise).with_conversion(), {
      {"", "Cast", infer_cast, cost_data_movement, plan_elementwise},
      {"", "CastLike", infer_cast_like, cost_data_movement, plan_elementwise},
  });
  r.add(OpForm::kPointwise, {
      {"", "Trilu", infer_trilu, cost_data_movement, not_measured("no GPU kernel yet")},
  });
  // Views: the output is the input's buffer in every runtime.
  r.add(OpTraits(OpForm::kLayout).with_view(), {
      {"", "Identity", infer_identity, cost_reinterpret, plan_reinterpret},
      {"", "Reshape", infer_reshape, cost_reinterpret, plan_reinterpret},
      {"", "Flatten", infer_flatten, cost_reinterpret, plan_reinterpret},
      {"", "Squeeze", infer_squeeze, cost_reinterpret, plan_reinterpret},
      {"", "Unsqueeze", infer_unsqueeze, cost_reinterpret, plan_reinterpret},
  });
  // A GEMM reads a transposed operand in place, attention its K^T: the permutation folds into it.
  r.add(OpTraits(OpForm::kLayout).with_permutation(), {
      {"", "Transpose", infer_transpose, cost_data_movement, plan_transpose},
  });
  r.add(OpTraits(OpForm::kLayout).with_repeat(), {
      {"", "Expand", infer_expand, cost_data_movement, plan_expand},
      {"", "Tile", infer_tile, cost_data_movement, plan_tile},
  });
  r.add(OpForm::kLayout, {
      {"", "Concat", infer_concat, cost_data_movement, plan_concat},
      {"", "Split", infer_split, cost_data_movement, plan_split},
      {"", "Slice", infer_slice, cost_selective_read, plan_slice},
      {"", "Pad", infer_pad, cost_data_movement, plan_pad},
      {"", "DepthToSpace", infer_depth_to_space, cost_data_movement, not_measured("no GPU kernel yet")},
      {"", "SpaceToDepth", infer_space_to_depth, cost_data_movement, not_measured("no GPU kernel yet")},
  });
  r.add(OpForm::kOther, {
      {"", "Shape", infer_shape, cost_reinterpret, plan_reinterpret},  // reads metadata only
      {"", "Size", infer_size, cost_reinterpret, plan_reinterpret},
  });
  register_tensor_indexing_ops(r);
}

}  // namespace modelcost
