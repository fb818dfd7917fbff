// Op rules: tensor family (ai.onnx), indexing and resampling: Gather*, Scatter*, Where, NonZero,
// Compress, OneHot, Unique, ReverseSequence, Resize, Upsample, CenterCropPad, string ops.
// Data-dependent output sizes (NonZero, Compress, Unique) get an upper bound marked estimate.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

#include "ops/defs/tensor_folding.h"
#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

void infer_gather(OpContext& c) {
  const Shape& data = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), data.size());
  if (const TensorValue* idx = c.value(1))
    for (size_t i = 0; i < idx->size(); ++i) {
      const int64_t k = idx->as_int(i);
      if (k < -data[axis] || k >= data[axis])
        c.fail("index " + std::to_string(k) + " is out of range for axis of size " + std::to_string(data[axis]));
    }
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), c.in_shape(1).begin(), c.in_shape(1).end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  c.set_output(0, c.in_dtype(0), out);
  fold_gather(c, axis);
}

void infer_gather_elements(OpContext& c) {
  if (c.in_rank(0) != c.in_rank(1)) c.fail("data and indices ranks differ");
  c.axis(c.attr_int("axis", 0), c.in_rank(0));
  c.set_output(0, c.in_dtype(0), c.in_shape(1));
}

void infer_gather_nd(OpContext& c) {
  const Shape& data = c.in_shape(0);
  const Shape& idx = c.in_shape(1);
  const int64_t b = c.attr_int("batch_dims", 0);
  if (idx.empty()) c.fail("indices must have rank >= 1");
  const int64_t last = idx.back();
  const auto rank = static_cast<int64_t>(data.size());
  // Compared without adding: batch_dims comes from the file and may be near 2^63.
  if (b < 0 || b >= static_cast<int64_t>(idx.size()) || b > rank || last > rank - b)
    c.fail("indices of depth " + std::to_string(last) + " with batch_dims " + std::to_string(b) + " exceed data rank " +
           std::to_string(rank) + " (or indices rank " + std::to_string(idx.size()) + ")");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  c.set_output(0, c.in_dtype(0), out);
}

void infer_scatter(OpContext& c) { c.set_output(0, c.in_dtype(0), c.in_shape(0)); }

// Scatter with a reduction (add/mul/max/min) does one flop per update element.
OpCost cost_scatter(const OpContext& c) {
  OpCost cost;
  if (c.attr_string("reduction", "none") != "none" && computes_in_float(c)) cost.flops = element_count(c.in_shape(2));
  return cost;
}

void infer_where(OpContext& c) {
  Shape out = broadcast_shapes(broadcast_shapes(c.in_shape(0), c.in_shape(1), c), c.in_shape(2), c);
  c.set_output(0, c.in_dtype(1), out);
  fold_where(c);
}

void infer_nonzero(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  if (const TensorValue* v = c.value(0); v && static_cast<double>(v->size()) == element_count(in)) {
    std::vector<std::vector<int64_t>> coords(in.size());
    const auto strides = strides_of(in);
    int64_t count = 0;
    for (size_t k = 0; k < v->size(); ++k) {
      if (v->as_double(k) == 0) continue;
      ++count;
      for (size_t d = 0; d < in.size(); ++d) coords[d].push_back((static_cast<int64_t>(k) / strides[d]) % in[d]);
    }
    c.set_output(0, onnx::TensorProto::INT64, {rank, count});
    std::vector<int64_t> flat;
    for (const auto& row : coords) flat.insert(flat.end(), row.begin(), row.end());
    c.set_value(0, make_int_value(std::move(flat)));
    return;
  }
  // Upper bound: every element non-zero.
  c.set_output(0, onnx::TensorProto::INT64, {rank, static_cast<int64_t>(element_count(in))}, true);
}

void infer_compress(OpContext& c) {
  const Shape& in = c.in_shape(0);
  int64_t selected = -1;
  if (const TensorValue* cond = c.value(1)) {
    selected = 0;
    for (size_t i = 0; i < cond->size(); ++i) selected += cond->as_int(i) != 0;
  }
  Shape out;
  if (c.has_attr("axis")) {
    const int64_t axis = c.axis(c.attr_int("axis", 0), in.size());
    out = in;
    out[axis] = selected >= 0 ? std::min(selected, in[axis]) : in[axis];
  } else {
    const int64_t n = static_cast<int64_t>(element_count(in));
    out = {selected >= 0 ? std::min(selected, n) : n};
  }
  c.set_output(0, c.in_dtype(0), out, selected < 0);
}

void infer_one_hot(OpContext& c) {
  const std::vector<int64_t> depth = c.require_ints(1, "depth");
  if (depth.size() != 1 || depth[0] <= 0) c.fail("depth must be one positive number");
  Shape out = c.in_shape(0);
  int64_t axis = c.attr_int("axis", -1);
  const int64_t rank = static_cast<int64_t>(out.size()) + 1;
  if (axis < -rank || axis >= rank) c.fail("axis out of range");
  if (axis < 0) axis += rank;
  out.insert(out.begin() + axis, depth[0]);
  c.set_output(0, c.in_dtype(2), out);
}

void infer_unique(OpContext& c) {
  const Shape& in = c.in_shape(0);
  Shape y;
  int64_t n;
  if (c.has_attr("axis")) {
    const int64_t axis = c.axis(c.attr_int("axis", 0), in.size());
    y = in;
    n = in[axis];
  } else {
    n = static_cast<int64_t>(element_count(in));
    y = {n};
  }
  c.set_output(0, c.in_dtype(0), y, true);
  c.set_output(1, onnx::TensorProto::INT64, {n}, true);
  c.set_output(2, onnx::TensorProto::INT64, {c.has_attr("axis") ? n : static_cast<int64_t>(element_count(in))});
  c.set_output(3, onnx::TensorProto::INT64, {n}, true);
}

OpCost cost_unique(const OpContext& c) {
  // A sort: n log2 n comparisons.
  const double n = element_count(c.in_shape(0));
  OpCost cost;
  if (computes_in_float(c)) cost.flops = n * std::max(1.0, std::log2(std::max(n, 2.0)));
  return cost;
}

// ---- Resize / Upsample ----
// A scaled dim as int64, failing (not wrapping) on a NaN, infinite or out-of-range product.
int64_t scaled_dim(const OpContext& c, double value) {
  if (!(value >= 0 && value < 9.2e18)) c.fail("scaling gives an invalid dim " + std::to_string(value));
  return static_cast<int64_t>(value);
}

void infer_resize(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (axes.empty()) for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  for (auto& a : axes) a = c.axis(a, in.size());
  Shape out = in;
  const size_t scales_at = c.opset() < 11 ? 1 : 2;
  const bool has_sizes = c.opset() >= 11 && c.has_input(3) && element_count(c.in_shape(3)) > 0;
  if (has_sizes) {
    const std::vector<int64_t> sizes = c.require_ints(3, "sizes");
    if (sizes.size() != axes.size()) c.fail("sizes has " + std::to_string(sizes.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    const std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = sizes[i];
    } else {
      double scale = policy == "not_larger" ? INFINITY : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double s = double(sizes[i]) / double(in[axes[i]]);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (int64_t a : axes) out[a] = scaled_dim(c, std::round(in[a] * scale));
    }
  } else {
    if (!c.has_input(scales_at)) c.fail("neither scales nor sizes given");
    const TensorValue* scales = c.value(scales_at);
    if (!scales) throw NotInferable("scales are not known at analysis time");
    if (scales->size() != axes.size()) c.fail("scales has " + std::to_string(scales->size()) + " entries for " + std::to_string(axes.size()) + " axes");
    for (size_t i = 0; i < axes.size(); ++i) {
      if (scales->as_double(i) <= 0) c.fail("scales must be positive");
      out[axes[i]] = scaled_dim(c, std::floor(in[axes[i]] * scales->as_double(i)));
    }
  }
  c.set_output(0, c.in_dtype(0), out);
}

void infer_upsample(OpContext& c) {
  const Shape& in = c.in_shape(0);
  std::vector<double> scales;
  if (c.opset() < 9) {
    for (float s : c.attr_floats("scales")) scales.push_back(s);
  } else {
    const TensorValue* v = c.value(1);
    if (!v) throw NotInferable("scales are not known at analysis time");
    for (size_t i = 0; i < v->size(); ++i) scales.push_back(v->as_double(i));
  }
  if (scales.size() != in.size()) c.fail("scales has " + std::to_string(scales.size()) + " entries for rank " + std::to_string(in.size()));
  Shape out = in;
  for (size_t i = 0; i < in.size(); ++i) out[i] = scaled_dim(c, std::floor(in[i] * scales[i]));
  c.set_output(0, c.in_dtype(0), out);
}

// Interpolation over the d resized axes: nearest copies (0 flops); linear blends 2^d points
// (2^d multiplies + 2^d - 1 adds); cubic blends 4^d points.
OpCost cost_resize(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& out = c.out(0).shape;
  int d = 0;
  for (size_t i = 0; i < in.size() && i < out.size(); ++i) d += in[i] != out[i];
  const std::string mode = c.attr_string("mode", "nearest");
  double points = mode == "linear" || mode == "bilinear" ? std::pow(2.0, d) : mode == "cubic" ? std::pow(4.0, d) : 0;
  OpCost cost;
  if (points > 0 && computes_in_float(c)) cost.flops = element_count(out) * (2 * points - 1);
  return cost;
}

void infer_center_crop_pad(OpContext& c) {
  const Shape& in = c.in_shape(0);
  const std::vector<int64_t> shape = c.require_ints(1, "shape");
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (axes.empty()) for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != shape.size()) c.fail("shape and axes differ in length");
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) out[c.axis(axes[i], in.size())] = shape[i];
  c.set_output(0, c.in_dtype(0), out);
}

void infer_string_normalizer(OpContext& c) {
  // Stopword removal can only shrink the output: the input shape is the upper bound.
  c.set_output(0, onnx::TensorProto::STRING, c.in_shape(0), c.has_attr("stopwords"));
}

void infer_regex_full_match(OpContext& c) { c.set_output(0, onnx::TensorProto::BOOL, c.in_shape(0)); }

void infer_string_split(OpContext& c) {
  const int64_t maxsplit = c.attr_int("maxsplit", -1);
  // maxsplit + 1 substrings at most; past any dim (near 2^63) the data decides, as with -1.
  if (maxsplit < 0 || maxsplit >= kMaxTensorDim) throw NotInferable("the number of substrings depends on the data");
  Shape out = c.in_shape(0);
  out.push_back(maxsplit + 1);
  c.set_output(0, onnx::TensorProto::STRING, out, true);
  c.set_output(1, onnx::TensorProto::INT64, c.in_shape(0));
}

void infer_image_decoder(OpContext&) { throw NotInferable("the decoded image size depends on the encoded data"); }

// ---- measurement ----

bool integer_indices(const OpContext& c) { return c.in_dtype(1) == 7 || c.in_dtype(1) == 6; }

OpPlan plan_gather(const OpContext& c) {
  const Shape& data = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), data.size());
  double index = 0;
  if (c.in_shape(1).empty() && known_scalar(c, 1, &index)) {
    // A constant scalar index selects one slice: a strided copy.
    StridedCopy copy;
    const auto src = contiguous_strides(data);
    auto i = static_cast<int64_t>(index);
    if (i < 0) i += data[static_cast<size_t>(axis)];
    copy.src_offset = i * src[static_cast<size_t>(axis)];
    for (size_t d = 0; d < data.size(); ++d)
      if (static_cast<int64_t>(d) != axis) { copy.dims.push_back(data[d]); copy.src_strides.push_back(src[d]); }
    copy.dst_strides = contiguous_strides(copy.dims);
    return copy_plan({copy});
  }
  if (!integer_indices(c)) return unsupported("Gather indices neither int64 nor int32");
  GatherPlan p;
  static_cast<RowView&>(p) = row_view(data, axis, axis);
  p.indices = static_cast<int64_t>(element_count(c.in_shape(1)));
  return p;
}

// GatherElements / ScatterElements: one index per element along the axis.
template <IndexedPlan::Kind Kind>
OpPlan plan_elements(const OpContext& c) {
  const std::string& op = c.node().op_type;
  if (!integer_indices(c)) return unsupported(op + " indices neither int64 nor int32");
  const Shape& data = c.in_shape(0);
  const Shape& indices = c.in_shape(1);
  if (data.empty() || indices.size() != data.size()) return unsupported(op + " indices of another rank than data");
  if (Kind == IndexedPlan::Kind::kScatterElements && c.attr_string("reduction", "none") != "none")
    return unsupported(op + " with reduction " + c.attr_string("reduction", ""));
  IndexedPlan p;
  p.kind = Kind;
  p.index_dims = indices;
  p.data_strides = contiguous_strides(data);
  p.axis = c.axis(c.attr_int("axis", 0), data.size());
  p.axis_len = data[static_cast<size_t>(p.axis)];
  return p;
}

// GatherND / ScatterND: folds the leading batch dims and the index tuples of width k.
template <IndexedPlan::Kind Kind>
OpPlan plan_nd(const OpContext& c) {
  const std::string& op = c.node().op_type;
  if (!integer_indices(c)) return unsupported(op + " indices neither int64 nor int32");
  if (Kind == IndexedPlan::Kind::kScatterND && c.attr_string("reduction", "none") != "none")
    return unsupported(op + " with reduction " + c.attr_string("reduction", ""));
  const Shape& data = c.in_shape(0);
  const Shape& indices = c.in_shape(1);
  if (indices.empty()) return unsupported(op + " of scalar indices");
  const int64_t k = indices.back();
  const int64_t batch_dims = Kind == IndexedPlan::Kind::kGatherND ? c.attr_int("batch_dims", 0) : 0;
  if (batch_dims < 0 || batch_dims >= static_cast<int64_t>(indices.size()))
    return unsupported(op + " batch_dims outside the indices' rank");
  const auto b = static_cast<size_t>(batch_dims);
  if (k < 1 || static_cast<size_t>(k) > data.size() - std::min(b, data.size()) || b + 1 > indices.size())
    return unsupported(op + " index tuples longer than the data's rank");
  IndexedPlan p;
  p.kind = Kind;
  const auto strides = contiguous_strides(data);
  p.batch = extent_product(data, 0, b);
  p.batch_stride = extent_product(data, b, data.size());
  p.tuples = extent_product(indices, b, indices.size() - 1);
  p.slice = extent_product(data, b + static_cast<size_t>(k), data.size());
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    p.tuple_dims.push_back(data[b + j]);
    p.tuple_strides.push_back(strides[b + j]);
  }
  return p;
}

// Resize of H and W of NCHW: nearest, linear or cubic, ONNX coordinate modes.
OpPlan plan_resize(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& out = c.out(0).shape;
  if (in.size() != 4 || in[0] != out[0] || in[1] != out[1]) return unsupported("Resize other than of H and W of NCHW");
  if (!float_data(c)) return unsupported("Resize on non-float tensors");
  ResizePlan p;
  const std::string mode = c.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "cubic") return unsupported("Resize mode " + mode);
  p.linear = mode == "linear" || mode == "bilinear";
  p.cubic = mode == "cubic";
  p.cubic_coeff_a = c.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  p.coordinate_mode = c.attr_string("coordinate_transformation_mode", c.opset() >= 11 ? "half_pixel" : "asymmetric");
  p.nearest_mode = c.attr_string("nearest_mode", "round_prefer_floor");
  if (p.coordinate_mode != "half_pixel" && p.coordinate_mode != "asymmetric" && p.coordinate_mode != "align_corners" &&
      p.coordinate_mode != "pytorch_half_pixel")
    return unsupported("Resize coordinate mode " + p.coordinate_mode);
  return p;
}

}  // namespace

OpPlan plan_nonzero(const OpContext& c);  // tensor_plans.cpp

void register_tensor_indexing_ops(OpRegistry& r) {
  r.add(OpForm::kPointwise, {
      {"", "Where", infer_where, cost_data_movement, plan_elementwise},
  });
  r.add(OpForm::kLayout, {
      {"", "CenterCropPad", infer_center_crop_pad, cost_data_movement, not_measured("no GPU kernel yet"), inputs(2, 2)},
  });
  r.add(OpForm::kGather, {
      {"", "Gather", infer_gather, cost_selective_read, plan_gather},
      {"", "GatherElements", infer_gather_elements, cost_selective_read, plan_elements<IndexedPlan::Kind::kGatherElements>},
      {"", "GatherND", infer_gather_nd, cost_selective_read, plan_nd<IndexedPlan::Kind::kGatherND>},
  });
  r.add(OpForm::kOther, {  // a data-dependent output size: runs alone
      {"", "Compress", infer_compress, cost_data_movement, not_measured("data-dependent output shape")},
  });
  r.add(OpForm::kScatter, {
      {"", "Scatter", infer_scatter, cost_scatter, plan_elements<IndexedPlan::Kind::kScatterElements>},
      {"", "ScatterElements", infer_scatter, cost_scatter, plan_elements<IndexedPlan::Kind::kScatterElements>},
      {"", "ScatterND", infer_scatter, cost_scatter, plan_nd<IndexedPlan::Kind::kScatterND>},
  });
  r.add(OpForm::kOther, {
      {"", "NonZero", infer_nonzero, cost_data_movement, plan_nonzero},
      {"", "OneHot", infer_one_hot, cost_data_movement, not_measured("no GPU kernel yet")},
      {"", "Unique", infer_unique, cost_unique, not_measured("data-dependent output shape")},
      {"", "ReverseSequence", infer_unary, cost_data_movement, not_measured("no GPU kernel yet")},
      {"", "Resize", infer_resize, cost_resize, plan_resize},
      {"", "Upsample", infer_upsample, cost_resize, plan_resize},
      {"", "StringNormalizer", infer_string_normalizer, cost_data_movement, not_measured("strings")},
      {"", "RegexFullMatch", infer_regex_full_match, cost_data_movement, not_measured("strings"), inputs(1, 1)},
      {"", "StringConcat", infer_broadcast, cost_data_movement, not_measured("strings"), inputs(2, 2)},
      {"", "StringSplit", infer_string_split, cost_data_movement, not_measured("strings"), inputs(1, 1).outputs(2, 2)},
      {"", "ImageDecoder", infer_image_decoder, cost_data_movement, not_measured("image decoding"), inputs(1, 1)},
      {"", "TfIdfVectorizer", infer_with_onnx_schema, cost_data_movement, not_measured("no GPU kernel yet (strings)")},
  });
}

}  // namespace modelcost
