#include "ops/defs/fused_helpers.h"

#include <algorithm>
#include <map>

namespace modelcost {
namespace {

std::vector<int64_t> ints_or(const OpContext& c, const char* name, size_t size, int64_t fallback) {
  std::vector<int64_t> v = c.attr_ints(name);
  if (v.empty()) return std::vector<int64_t>(size, fallback);
  if (v.size() != size)
    c.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(size));
  return v;
}

// Output size of one spatial axis of a sliding window (Conv, pooling).
int64_t window_output(const OpContext& c, const std::string& auto_pad, int64_t in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  if (kernel <= 0 || stride <= 0 || dilation <= 0)
    c.fail("kernel, stride and dilation must be positive (got " + std::to_string(kernel) + ", " +
           std::to_string(stride) + ", " + std::to_string(dilation) + ")");
  if (pad_begin < 0 || pad_end < 0) c.fail("pads must not be negative");
  const int64_t extent = (kernel - 1) * dilation + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + stride - 1) / stride;
  if (auto_pad == "VALID") {
    if (in < extent) c.fail("the kernel extent " + std::to_string(extent) + " exceeds the input size " + std::to_string(in));
    return (in - extent) / stride + 1;
  }
  if (auto_pad != "NOTSET" && !auto_pad.empty()) c.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  const int64_t padded = in + pad_begin + pad_end;
  if (padded < extent)
    c.fail("the kernel extent " + std::to_string(extent) + " exceeds the padded input size " + std::to_string(padded));
  int64_t out = ceil_mode ? (padded - extent + stride - 1) / stride + 1 : (padded - extent) / stride + 1;
  // ceil_mode: the last window must start inside the input or its leading pad.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

}  // namespace

double dims_product(const Shape& shape, size_t from, size_t to) {
  double n = 1;
  for (size_t i = from; i < to && i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
  return n;
}

int64_t required_int_attr(const OpContext& c, const char* name, int64_t minimum) {
  if (!c.has_attr(name)) c.fail(std::string("attribute ") + name + " is required");
  const int64_t v = c.attr_int(name, 0);
  if (v < minimum) c.fail(std::string(name) + " = " + std::to_string(v) + " must be at least " + std::to_string(minimum));
  return v;
}

ConvGeometry conv_geometry(const OpContext& c, const Shape& x, const Shape& w, bool channels_last) {
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3 (N, C, spatial...)");
  if (w.size() != x.size())
    c.fail("weight rank " + std::to_string(w.size()) + " differs from input rank " + std::to_string(x.size()));
  const size_t spatial = x.size() - 2;
  const int64_t group = c.attr_int("group", 1);
  if (group <= 0) c.fail("group = " + std::to_string(group) + " must be positive");
  const int64_t channels = channels_last ? x.back() : x[1];
  if (channels != w[1] * group)
    c.fail("input has " + std::to_string(channels) + " channels but weight expects " + std::to_string(w[1]) +
           " x group " + std::to_string(group));
  if (w[0] % group != 0) c.fail("output channels " + std::to_string(w[0]) + " are not divisible by group " + std::to_string(group));
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.empty()) kernel.assign(w.begin() + 2, w.end());
  if (kernel.size() != spatial) c.fail("kernel_shape has " + std::to_string(kernel.size()) + " dims, expected " + std::to_string(spatial));
  const auto strides = ints_or(c, "strides", spatial, 1);
  const auto dilations = ints_or(c, "dilations", spatial, 1);
  const auto pads = ints_or(c, "pads", 2 * spatial, 0);
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");

  ConvGeometry g;
  g.output.push_back(x[0]);
  if (!channels_last) g.output.push_back(w[0]);
  double out_spatial = 1, kernel_elements = 1;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = channels_last ? x[1 + i] : x[2 + i];
    const int64_t o = window_output(c, auto_pad, in, kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial], false);
    g.output.push_back(o);
    out_spatial *= static_cast<double>(o);
    kernel_elements *= static_cast<double>(kernel[i]);
  }
  if (channels_last) g.output.push_back(w[0]);
  g.macs = static_cast<double>(x[0]) * static_cast<double>(w[0]) * out_spatial * static_cast<double>(w[1]) * kernel_elements;
  return g;
}

Shape pool_output_shape(const OpContext& c, const Shape& x, bool channels_last, double* kernel_elements) {
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3 (N, C, spatial...)");
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != spatial)
    c.fail("kernel_shape has " + std::to_string(kernel.size()) + " dims, expected " + std::to_string(spatial));
  const auto strides = ints_or(c, "strides", spatial, 1);
  const auto dilations = ints_or(c, "dilations", spatial, 1);
  const auto pads = ints_or(c, "pads", 2 * spatial, 0);
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  Shape out{x[0]};
  if (!channels_last) out.push_back(x[1]);
  *kernel_elements = 1;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = channels_last ? x[1 + i] : x[2 + i];
    out.push_back(window_output(c, auto_pad, in, kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial], ceil_mode));
    *kernel_elements *= static_cast<double>(kernel[i]);
  }
  if (channels_last) out.push_back(x.back());
  return out;
}

Shape matmul_shape(const OpContext& c, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) c.fail("matrix product of a scalar");
  const Shape A = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape B = b.size() == 1 ? Shape{b[0], 1} : b;
  if (A.back() != B[B.size() - 2])
    c.fail("inner dims differ: " + shape_to_string(a) + " x " + shape_to_string(b));
  Shape out = broadcast_shapes(Shape(A.begin(), A.end() - 2), Shape(B.begin(), B.end() - 2), c);
  if (a.size() > 1) out.push_back(A[A.size() - 2]);
  if (b.size() > 1) out.push_back(B.back());
  return out;
}

double matmul_macs(const Shape& a, const Shape& out) {
  return element_count(out) * static_cast<double>(a.empty() ? 0 : a.back());
}

GemmGeometry gemm_geometry(const OpContext& c, const Shape& a, const Shape& b, bool trans_a, bool trans_b) {
  if (a.size() != 2 || b.size() != 2) c.fail("A and B must be 2-D, got " + shape_to_string(a) + " and " + shape_to_string(b));
  GemmGeometry g;
  g.m = trans_a ? a[1] : a[0];
  g.k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0];
  g.n = trans_b ? b[0] : b[1];
  if (g.k != kb) c.fail("inner dims differ: " + shape_to_string(a) + " x " + shape_to_string(b));
  return g;
}

double activation_flops(const OpContext& c, const std::string& name) {
  static const std::map<std::string, double> table = {
      {"", 0},           {"Identity", 0},   {"Relu", 1},          {"LeakyRelu", 2},          {"Clip", 2},
      {"HardSigmoid", 4}, {"Sigmoid", 4},   {"Tanh", 1},          {"Elu", 4},                {"Selu", 5},
      {"Softplus", 3},   {"ThresholdedRelu", 1}, {"ScaledTanh", 3}, {"ParametricSoftplus", 5}, {"HardSwish", 5},
  };
  auto it = table.find(name);
  if (it == table.end()) c.fail("activation '" + name + "' is not one the runtime implements");
  return it->second;
}

}  // namespace modelcost
