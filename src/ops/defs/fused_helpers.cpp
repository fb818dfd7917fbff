#include "ops/defs/fused_helpers.h"

#include <algorithm>
#include <map>

#include "ops/defs/nn_common.h"

namespace modelcost {

double dims_product(const Shape& shape, size_t from, size_t to) {
  double n = 1;
  for (size_t i = from; i < to && i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
  return n;
}

int64_t required_int_attr(const OpContext& c, const char* name, int64_t minimum) {
  if (!c.has_attr(name)) c.fail(std::string("attribute ") + name + " is required");
  const int64_t v = c.attr_int(name, 0);
  if (v < minimum) c.fail(std::string(name) + " = " + std::to_string(v) + " must be at least " + std::to_string(minimum));
  // Counts (heads, groups, block sizes) multiply dims: past any dim they could only overflow.
  if (v > kMaxTensorDim) c.fail(std::string(name) + " = " + std::to_string(v) + " is over 2^50");
  return v;
}

// The window geometry (attributes, defaults, checks, output dims) is nn's, so the fused and
// quantized convolutions shape exactly like Conv.
ConvGeometry conv_geometry(const OpContext& c, const Shape& x, const Shape& w, bool channels_last) {
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3 (N, C, spatial...)");
  if (w.size() != x.size())
    c.fail("weight rank " + std::to_string(w.size()) + " differs from input rank " + std::to_string(x.size()));
  const int64_t group = c.attr_int("group", 1);
  if (group <= 0) c.fail("group = " + std::to_string(group) + " must be positive");
  const int64_t channels = channels_last ? x.back() : x[1];
  if (channels != dim_product(c, w[1], group, "weight channels x group"))
    c.fail("input has " + std::to_string(channels) + " channels but weight expects " + std::to_string(w[1]) +
           " x group " + std::to_string(group));
  if (w[0] % group != 0) c.fail("output channels " + std::to_string(w[0]) + " are not divisible by group " + std::to_string(group));
  const Shape spatial = channels_last ? Shape(x.begin() + 1, x.end() - 1) : dims_from(x, 2);
  const Window win = read_window(c, spatial.size(), dims_from(w, 2));
  const Shape out_spatial = window_output(c, win, spatial);
  ConvGeometry g;
  g.output.push_back(x[0]);
  if (!channels_last) g.output.push_back(w[0]);
  g.output.insert(g.output.end(), out_spatial.begin(), out_spatial.end());
  if (channels_last) g.output.push_back(w[0]);
  g.macs = element_count(g.output) * static_cast<double>(w[1]) * win.kernel_size();
  return g;
}

Shape pool_output_shape(const OpContext& c, const Shape& x, bool channels_last, double* kernel_elements) {
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3 (N, C, spatial...)");
  const Shape spatial = channels_last ? Shape(x.begin() + 1, x.end() - 1) : dims_from(x, 2);
  const Window win = read_window(c, spatial.size(), {});
  const Shape out_spatial = window_output(c, win, spatial);
  *kernel_elements = win.kernel_size();
  Shape out{x[0]};
  if (!channels_last) out.push_back(x[1]);
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
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

GemmGeometry gemm_geometry_of_inputs(const OpContext& c, size_t a_input, size_t b_input) {
  return gemm_geometry(c, c.in_shape(a_input), c.in_shape(b_input), c.attr_int("transA", 0) != 0,
                       c.attr_int("transB", 0) != 0);
}

double output_elements(const OpContext& c, size_t i) { return element_count(c.out(i).shape); }

double layer_norm_flops(double elements, double rows, bool gamma, bool beta) {
  return elements * (6 + (gamma ? 1 : 0) + (beta ? 1 : 0)) + 4 * rows;
}

double rms_norm_flops(double elements, double rows, bool gamma) { return elements * (3 + (gamma ? 1 : 0)) + 3 * rows; }

double activation_flops(const OpContext& c, const std::string& name) {
  // The same counts as the standalone ai.onnx activations (math.cpp).
  static const std::map<std::string, double> table = {
      {"", 0},           {"Identity", 0},   {"Relu", 1},          {"LeakyRelu", 2},          {"Clip", 2},
      {"HardSigmoid", 4}, {"Sigmoid", 4},   {"Tanh", 1},          {"Elu", 3},                {"Selu", 4},
      {"Softplus", 3},   {"ThresholdedRelu", 1}, {"ScaledTanh", 3}, {"ParametricSoftplus", 5}, {"HardSwish", 5},
  };
  auto it = table.find(name);
  if (it == table.end()) c.fail("activation '" + name + "' is not one the runtime implements");
  return it->second;
}

}  // namespace modelcost
