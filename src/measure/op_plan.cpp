#include "measure/op_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <unordered_map>

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

namespace {

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int64_t normalize_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

OpPlan unsupported(const std::string& why) {
  OpPlan p;
  p.kind = OpKind::kUnsupported;
  p.reason = why;
  return p;
}

std::vector<int64_t> known_ints(const TensorSpec& t, bool* ok) {
  if (!t.present) return {};
  if (!t.value) { *ok = false; return {}; }
  std::vector<int64_t> v;
  for (size_t i = 0; i < t.value->size(); ++i) v.push_back(t.value->as_int(i));
  return v;
}

bool known_scalar(const TensorSpec& t, double* out) {
  if (!t.present || !t.value || t.value->size() != 1) return false;
  *out = t.value->as_double(0);
  return true;
}

const std::unordered_map<std::string, UnaryOp>& unary_ops() {
  static const std::unordered_map<std::string, UnaryOp> ops = {
      {"Relu", UnaryOp::kRelu}, {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},
      {"Erf", UnaryOp::kErf}, {"Exp", UnaryOp::kExp}, {"Log", UnaryOp::kLog}, {"Sqrt", UnaryOp::kSqrt},
      {"Neg", UnaryOp::kNeg}, {"Abs", UnaryOp::kAbs}, {"Reciprocal", UnaryOp::kReciprocal},
      {"Gelu", UnaryOp::kGelu}, {"HardSigmoid", UnaryOp::kHardSigmoid}, {"HardSwish", UnaryOp::kHardSwish},
      {"LeakyRelu", UnaryOp::kLeakyRelu}, {"Clip", UnaryOp::kClip}, {"Softplus", UnaryOp::kSoftplus},
      {"Elu", UnaryOp::kElu}, {"Floor", UnaryOp::kFloor}, {"Ceil", UnaryOp::kCeil}, {"Cast", UnaryOp::kIdentity},
      {"CastLike", UnaryOp::kIdentity}};
  return ops;
}

const std::unordered_map<std::string, BinaryOp>& binary_ops() {
  static const std::unordered_map<std::string, BinaryOp> ops = {
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow}, {"Max", BinaryOp::kMax}, {"Min", BinaryOp::kMin}, {"PRelu", BinaryOp::kPRelu}};
  return ops;
}

const std::unordered_map<std::string, ReduceOp>& reduce_ops() {
  static const std::unordered_map<std::string, ReduceOp> ops = {
      {"ReduceSum", ReduceOp::kSum}, {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin}, {"ReduceSumSquare", ReduceOp::kSumSquare}, {"ReduceL2", ReduceOp::kL2},
      {"ReduceL1", ReduceOp::kL1}, {"ReduceLogSumExp", ReduceOp::kLogSumExp}};
  return ops;
}

const std::set<std::string>& zero_cost_ops() {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                            "Dropout", "Shape", "Size", "Constant"};
  return ops;
}

bool all_float(const NodeSpec& s) {
  for (const auto& t : s.inputs)
    if (t.present && !dtype_is_float(t.dtype)) return false;
  for (const auto& t : s.outputs)
    if (t.present && !dtype_is_float(t.dtype)) return false;
  return true;
}

OpPlan plan_unary(const NodeSpec& s, UnaryOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  if (s.in(0).dtype != s.outputs[0].dtype) return unsupported("Cast between different float dtypes");
  OpPlan p;
  p.kind = OpKind::kUnary;
  p.unary = op;
  p.dims = s.outputs[0].shape;
  p.input_strides = {contiguous_strides(p.dims)};
  const Attributes& a = s.attributes;
  if (op == UnaryOp::kLeakyRelu) p.alpha = a.get_float("alpha", 0.01);
  if (op == UnaryOp::kElu) p.alpha = a.get_float("alpha", 1.0);
  if (op == UnaryOp::kHardSigmoid) { p.alpha = a.get_float("alpha", 0.2); p.beta = a.get_float("beta", 0.5); }
  if (op == UnaryOp::kGelu && a.get_string("approximate", "none") == "tanh") p.unary = UnaryOp::kGeluTanh;
  if (op == UnaryOp::kClip) {
    p.alpha = -std::numeric_limits<double>::infinity();
    p.beta = std::numeric_limits<double>::infinity();
    if (s.opset < 11) {
      p.alpha = a.get_float("min", p.alpha);
      p.beta = a.get_float("max", p.beta);
    } else {
      if (s.has_input(1) && !known_scalar(s.in(1), &p.alpha)) return unsupported("Clip min not known");
      if (s.has_input(2) && !known_scalar(s.in(2), &p.beta)) return unsupported("Clip max not known");
    }
  }
  return p;
}

OpPlan plan_binary(const NodeSpec& s, BinaryOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  if (s.inputs.size() != 2 || !s.has_input(1)) return unsupported(s.op_type + " with other than 2 inputs");
  OpPlan p;
  p.kind = OpKind::kBinary;
  p.binary = op;
  p.dims = s.outputs[0].shape;
  p.input_strides = {broadcast_strides(s.in(0).shape, p.dims), broadcast_strides(s.in(1).shape, p.dims)};
  return p;
}

OpPlan copy_plan(std::vector<StridedCopy> copies) {
  OpPlan p;
  p.kind = OpKind::kCopy;
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
  OpPlan p;
  p.kind = OpKind::kGather;
  p.outer = product(data, 0, axis);
  p.axis_len = data[axis];
  p.inner = product(data, axis + 1, data.size());
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
  p.fill_output = true;
  p.fill_value = value;
  return p;
}

OpPlan plan_reduce(const NodeSpec& s, ReduceOp op) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  const Shape& in = s.in(0).shape;
  std::vector<int64_t> axes;
  const bool axes_as_input = s.opset >= 18 || (s.op_type == "ReduceSum" && s.opset >= 13);
  if (axes_as_input) {
    bool ok = true;
    axes = known_ints(s.in(1), &ok);
    if (!ok) return unsupported("reduction axes not known at analysis time");
  } else {
    axes = s.attributes.get_ints("axes");
  }
  if (axes.empty()) {
    if (s.attributes.get_int("noop_with_empty_axes", 0)) {
      OpPlan p;
      p.kind = OpKind::kZeroCost;
      p.reason = "reduction over no axes";
      return p;
    }
    for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (auto& a : axes) a = normalize_axis(a, in.size());
  std::sort(axes.begin(), axes.end());
  // Size-1 dims may sit between reduced axes without breaking contiguity.
  for (size_t i = 1; i < axes.size(); ++i)
    for (int64_t d = axes[i - 1] + 1; d < axes[i]; ++d)
      if (in[d] != 1) return unsupported("reduction over non-adjacent axes");
  OpPlan p;
  p.kind = OpKind::kReduce;
  p.reduce = op;
  p.outer = product(in, 0, axes.front());
  p.axis_len = product(in, axes.front(), axes.back() + 1);
  p.inner = product(in, axes.back() + 1, in.size());
  return p;
}

OpPlan plan_global_pool(const NodeSpec& s, ReduceOp op) {
  const Shape& in = s.in(0).shape;
  if (in.size() < 3) return unsupported("global pooling needs N, C and spatial dims");
  OpPlan p;
  p.kind = OpKind::kReduce;
  p.reduce = op;
  p.outer = in[0] * in[1];
  p.axis_len = product(in, 2, in.size());
  p.inner = 1;
  return p;
}

OpPlan plan_softmax(const NodeSpec& s) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  const Shape& in = s.in(0).shape;
  OpPlan p;
  p.kind = OpKind::kSoftmax;
  p.log_softmax = s.op_type == "LogSoftmax";
  if (s.opset >= 13) {
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
    p.outer = product(in, 0, axis);
    p.axis_len = in[axis];
    p.inner = product(in, axis + 1, in.size());
  } else {
    const int64_t axis = normalize_axis(s.attributes.get_int("axis", 1), in.size());
    p.outer = product(in, 0, axis);
    p.axis_len = product(in, axis, in.size());
  }
  return p;
}

OpPlan plan_layer_norm(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("LayerNormalization on non-float tensors");
  const Shape& in = s.in(0).shape;
  const int64_t axis = normalize_axis(s.attributes.get_int("axis", -1), in.size());
  OpPlan p;
  p.kind = OpKind::kLayerNorm;
  p.outer = product(in, 0, axis);
  p.axis_len = product(in, axis, in.size());
  p.epsilon = s.attributes.get_float("epsilon", 1e-5);
  p.has_scale = s.has_input(1);
  p.has_bias = s.has_input(2);
  if ((p.has_scale && element_count(s.in(1).shape) != p.axis_len) ||
      (p.has_bias && element_count(s.in(2).shape) != p.axis_len))
    return unsupported("LayerNormalization with broadcast scale or bias");
  return p;
}

// Pads of a conv or pool window: explicit, or from auto_pad and the output size.
bool window_pads(const NodeSpec& s, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                 const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& dilations, std::vector<int64_t>* pads) {
  const size_t n = kernel.size();
  const std::string auto_pad = s.attributes.get_string("auto_pad", "NOTSET");
  *pads = s.attributes.get_ints("pads");
  if (auto_pad == "NOTSET") {
    if (pads->empty()) pads->assign(2 * n, 0);
    return pads->size() == 2 * n;
  }
  pads->assign(2 * n, 0);
  if (auto_pad == "VALID") return true;
  for (size_t i = 0; i < n; ++i) {
    const int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i]);
    const int64_t small = total / 2, large = total - small;
    (*pads)[i] = auto_pad == "SAME_LOWER" ? large : small;
    (*pads)[i + n] = auto_pad == "SAME_LOWER" ? small : large;
  }
  return true;
}

OpPlan plan_conv(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("Conv on non-float tensors");
  const Shape& x = s.in(0).shape;
  const Shape& w = s.in(1).shape;
  const Shape& y = s.outputs[0].shape;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) return unsupported("Conv of rank other than 3-5");
  OpPlan p;
  p.kind = OpKind::kConv;
  ConvParams& c = p.conv;
  c.spatial = static_cast<int>(x.size()) - 2;
  c.batch = x[0];
  c.in_channels = x[1];
  c.out_channels = w[0];
  c.groups = s.attributes.get_int("group", 1);
  c.in_size.assign(x.begin() + 2, x.end());
  c.kernel.assign(w.begin() + 2, w.end());
  c.out_size.assign(y.begin() + 2, y.end());
  c.strides = s.attributes.get_ints("strides");
  c.dilations = s.attributes.get_ints("dilations");
  if (c.strides.empty()) c.strides.assign(c.spatial, 1);
  if (c.dilations.empty()) c.dilations.assign(c.spatial, 1);
  if (!window_pads(s, c.in_size, c.out_size, c.kernel, c.strides, c.dilations, &c.pads))
    return unsupported("Conv pads do not match the kernel rank");
  c.has_bias = s.has_input(2);
  return p;
}

OpPlan plan_pool(const NodeSpec& s) {
  if (!all_float(s)) return unsupported(s.op_type + " on non-float tensors");
  if (s.outputs.size() > 1 && s.outputs[1].present) return unsupported("MaxPool with an Indices output");
  const Shape& x = s.in(0).shape;
  if (x.size() < 3) return unsupported("pooling needs N, C and spatial dims");
  OpPlan p;
  p.kind = OpKind::kPool;
  PoolParams& pool = p.pool;
  pool.max = s.op_type == "MaxPool";
  pool.count_include_pad = s.attributes.get_int("count_include_pad", 0) != 0;
  pool.kernel = s.attributes.get_ints("kernel_shape");
  const size_t n = x.size() - 2;
  if (pool.kernel.size() != n) return unsupported("pool kernel_shape does not match the input rank");
  pool.strides = s.attributes.get_ints("strides");
  if (pool.strides.empty()) pool.strides.assign(n, 1);
  std::vector<int64_t> dilations = s.attributes.get_ints("dilations");
  for (int64_t d : dilations)
    if (d != 1) return unsupported("dilated pooling");
  dilations.assign(n, 1);
  const std::vector<int64_t> in(x.begin() + 2, x.end());
  const std::vector<int64_t> out(s.outputs[0].shape.begin() + 2, s.outputs[0].shape.end());
  if (!window_pads(s, in, out, pool.kernel, pool.strides, dilations, &pool.pads))
    return unsupported("pool pads do not match the kernel rank");
  return p;
}

OpPlan plan_matmul(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("MatMul on non-float tensors");
  Shape a = s.in(0).shape, b = s.in(1).shape;
  if (a.empty() || b.empty()) return unsupported("MatMul of a scalar");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  OpPlan p;
  p.kind = OpKind::kMatMul;
  MatMulParams& m = p.matmul;
  m.m = a[a.size() - 2];
  m.k = a.back();
  m.n = b.back();
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const int64_t a_count = product(a_batch, 0, a_batch.size()), b_count = product(b_batch, 0, b_batch.size());
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
  return p;
}

OpPlan plan_gemm(const NodeSpec& s) {
  if (!all_float(s)) return unsupported("Gemm on non-float tensors");
  const Shape& a = s.in(0).shape;
  const Shape& b = s.in(1).shape;
  if (a.size() != 2 || b.size() != 2) return unsupported("Gemm inputs not 2-D");
  OpPlan p;
  p.kind = OpKind::kMatMul;
  MatMulParams& m = p.matmul;
  m.trans_a = s.attributes.get_int("transA", 0) != 0;
  m.trans_b = s.attributes.get_int("transB", 0) != 0;
  m.m = m.trans_a ? a[1] : a[0];
  m.k = m.trans_a ? a[0] : a[1];
  m.n = m.trans_b ? b[0] : b[1];
  m.alpha = s.attributes.get_float("alpha", 1.0);
  if (s.has_input(2)) {
    m.beta = s.attributes.get_float("beta", 1.0);
    const Shape& c = s.in(2).shape;
    const double n = element_count(c);
    if (n == 1) m.bias = MatMulParams::Bias::kScalar;
    else if (c.back() == m.n && n == m.n) m.bias = MatMulParams::Bias::kRow;
    else if (n == m.m && c.size() == 2 && c[1] == 1) m.bias = MatMulParams::Bias::kColumn;
    else if (n == m.m * m.n) m.bias = MatMulParams::Bias::kFull;
    else return unsupported("Gemm bias of shape " + shape_to_string(c));
  }
  return p;
}

OpPlan plan_resize(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  const Shape& out = s.outputs[0].shape;
  if (in.size() != 4 || in[0] != out[0] || in[1] != out[1]) return unsupported("Resize other than of H and W of NCHW");
  OpPlan p;
  p.kind = OpKind::kResize;
  const std::string mode = s.attributes.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") return unsupported("Resize mode " + mode);
  p.resize_linear = mode == "linear";
  p.coordinate_mode = s.attributes.get_string("coordinate_transformation_mode", s.opset >= 11 ? "half_pixel" : "asymmetric");
  p.nearest_mode = s.attributes.get_string("nearest_mode", "round_prefer_floor");
  if (p.coordinate_mode != "half_pixel" && p.coordinate_mode != "asymmetric" && p.coordinate_mode != "align_corners" &&
      p.coordinate_mode != "pytorch_half_pixel")
    return unsupported("Resize coordinate mode " + p.coordinate_mode);
  return p;
}

}  // namespace

OpPlan plan_operation(const NodeSpec& s) {
  for (const auto& t : s.outputs)
    if (t.present && element_count(t.shape) == 0) {
      OpPlan p;
      p.kind = OpKind::kZeroCost;
      p.reason = "empty output";
      return p;
    }
  if (!s.domain.empty() && s.domain != "ai.onnx") return unsupported("op of domain " + s.domain);
  if (zero_cost_ops().count(s.op_type)) {
    OpPlan p;
    p.kind = OpKind::kZeroCost;
    p.reason = "reinterprets its input; moves no data";
    return p;
  }
  bool all_folded = !s.outputs.empty();
  for (const auto& t : s.outputs)
    if (t.present && !t.value) all_folded = false;
  if (all_folded) {
    OpPlan p;
    p.kind = OpKind::kZeroCost;
    p.reason = "output folded at analysis time";
    return p;
  }
  if (s.outputs.empty() || !s.outputs[0].present || !s.has_input(0)) return unsupported("node without input or output");
  const std::string& op = s.op_type;
  if (auto it = unary_ops().find(op); it != unary_ops().end()) return plan_unary(s, it->second);
  if (auto it = binary_ops().find(op); it != binary_ops().end()) return plan_binary(s, it->second);
  if (auto it = reduce_ops().find(op); it != reduce_ops().end()) return plan_reduce(s, it->second);
  if (op == "Transpose") return plan_transpose(s);
  if (op == "Slice") return plan_slice(s);
  if (op == "Concat") return plan_concat(s);
  if (op == "Split") return plan_split(s);
  if (op == "Gather") return plan_gather(s);
  if (op == "Expand") return plan_expand(s);
  if (op == "Pad") return plan_pad(s);
  if (op == "GlobalAveragePool") return plan_global_pool(s, ReduceOp::kMean);
  if (op == "GlobalMaxPool") return plan_global_pool(s, ReduceOp::kMax);
  if (op == "Softmax" || op == "LogSoftmax") return plan_softmax(s);
  if (op == "LayerNormalization") return plan_layer_norm(s);
  if (op == "Conv") return plan_conv(s);
  if (op == "MaxPool" || op == "AveragePool") return plan_pool(s);
  if (op == "MatMul") return plan_matmul(s);
  if (op == "Gemm") return plan_gemm(s);
  if (op == "Resize" || op == "Upsample") return plan_resize(s);
  return unsupported("no measurement kernel for " + op);
}

}  // namespace modelcost
