// Plans of the library-backed operations: convolution, pooling, matrix products; and Resize.
#include "measure/op_plan_internal.h"

#include <algorithm>

namespace modelcost::plan_detail {

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
  if (!float_data(s) || !dtype_is_float(s.in(1).dtype)) return unsupported("Conv on non-float tensors");
  const Shape& x = s.in(0).shape;
  const Shape& w = s.in(1).shape;
  const Shape& y = s.outputs[0].shape;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) return unsupported("Conv of rank other than 3-5");
  ConvParams c;
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
  return c;
}

OpPlan plan_pool(const NodeSpec& s) {
  if (!float_data(s)) return unsupported(s.op_type + " on non-float tensors");
  if (s.outputs.size() > 1 && s.outputs[1].present) return unsupported("MaxPool with an Indices output");
  const Shape& x = s.in(0).shape;
  if (x.size() < 3) return unsupported("pooling needs N, C and spatial dims");
  PoolParams pool;
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
  return pool;
}

OpPlan plan_matmul(const NodeSpec& s) {
  if (!float_data(s) || !dtype_is_float(s.in(1).dtype)) return unsupported("MatMul on non-float tensors");
  Shape a = s.in(0).shape, b = s.in(1).shape;
  if (a.empty() || b.empty()) return unsupported("MatMul of a scalar");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulParams m;
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
  return m;
}

OpPlan plan_gemm(const NodeSpec& s) {
  if (!float_data(s) || !dtype_is_float(s.in(1).dtype)) return unsupported("Gemm on non-float tensors");
  const Shape& a = s.in(0).shape;
  const Shape& b = s.in(1).shape;
  if (a.size() != 2 || b.size() != 2) return unsupported("Gemm inputs not 2-D");
  MatMulParams m;
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
  return m;
}

OpPlan plan_resize(const NodeSpec& s) {
  const Shape& in = s.in(0).shape;
  const Shape& out = s.outputs[0].shape;
  if (in.size() != 4 || in[0] != out[0] || in[1] != out[1]) return unsupported("Resize other than of H and W of NCHW");
  if (!float_data(s)) return unsupported("Resize on non-float tensors");
  ResizePlan p;
  const std::string mode = s.attributes.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") return unsupported("Resize mode " + mode);
  p.linear = mode == "linear";
  p.coordinate_mode = s.attributes.get_string("coordinate_transformation_mode", s.opset >= 11 ? "half_pixel" : "asymmetric");
  p.nearest_mode = s.attributes.get_string("nearest_mode", "round_prefer_floor");
  if (p.coordinate_mode != "half_pixel" && p.coordinate_mode != "asymmetric" && p.coordinate_mode != "align_corners" &&
      p.coordinate_mode != "pytorch_half_pixel")
    return unsupported("Resize coordinate mode " + p.coordinate_mode);
  return p;
}

}  // namespace modelcost::plan_detail
