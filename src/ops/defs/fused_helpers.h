// Helpers shared by the quantization, attention and com.microsoft families: shapes and MACs of
// the Conv / MatMul / Gemm forms they wrap, and per-element FLOPs of the activations they fuse.
#pragma once
#include <string>

#include "ops/rule_helpers.h"

namespace modelcost {

// FLOPs per element of common pieces. Each elementary operation (add, multiply, divide, compare,
// exp, log, tanh, erf, sqrt) counts 1; docs/ops/com_microsoft.md lists the resulting table.
constexpr double kSoftmaxFlops = 5;       // max, subtract, exp, sum, divide
constexpr double kQuantizeFlops = 3;      // divide by scale, round, add zero point
constexpr double kDequantizeFlops = 2;    // subtract zero point, multiply by scale
constexpr double kRotaryFlops = 3;        // per rotated element: x*cos -/+ y*sin, two of them per pair
constexpr double kSigmoidFlops = 4;       // negate, exp, add, divide

struct ConvGeometry {
  Shape output;      // [N, M, spatial...], or [N, spatial..., M] when channels_last
  double macs = 0;   // N * M * output spatial * (C / group) * kernel elements
};
// Conv output shape and MACs from X, W and the Conv attributes (kernel_shape, strides, dilations,
// pads, auto_pad, group). channels_last: X and Y are [N, spatial..., C]; W is always [M, C/group, k...].
ConvGeometry conv_geometry(const OpContext& c, const Shape& x, const Shape& w, bool channels_last);

// Pooling output shape (kernel_shape required, strides, dilations, pads, auto_pad, ceil_mode).
// *kernel_elements receives the number of elements of one window.
Shape pool_output_shape(const OpContext& c, const Shape& x, bool channels_last, double* kernel_elements);

// numpy.matmul output shape (1-D operands promoted and squeezed back, batch dims broadcast);
// fails naming the node when the inner dims differ.
Shape matmul_shape(const OpContext& c, const Shape& a, const Shape& b);
// MACs of numpy.matmul: output elements x the inner dim (a's last dim).
double matmul_macs(const Shape& a, const Shape& out);

struct GemmGeometry {
  int64_t m = 0, n = 0, k = 0;
};
// Gemm of 2-D A and B with the transA / transB flags; fails naming the node on a mismatch.
GemmGeometry gemm_geometry(const OpContext& c, const Shape& a, const Shape& b, bool trans_a, bool trans_b);
// The same for the node's inputs a_input and b_input and its transA / transB attributes.
GemmGeometry gemm_geometry_of_inputs(const OpContext& c, size_t a_input, size_t b_input);

// Layer normalisation of `elements` in `rows` rows, counted as nn's LayerNormalization counts it:
// 6 per element (mean, variance: subtract, square, add; normalise: subtract, scale by 1/std),
// +1 for gamma, +1 for beta, and 4 per row (mean and variance divides, epsilon add, rsqrt).
double layer_norm_flops(double elements, double rows, bool gamma, bool beta);
// RMS normalisation: 3 per element (square, add, scale by 1/rms), +1 for gamma, and 3 per row
// (divide, epsilon add, rsqrt).
double rms_norm_flops(double elements, double rows, bool gamma);

// FLOPs per element of an activation named by a fused op's string attribute ("Relu", "Sigmoid",
// ...); "" is none. Fails naming the node for a name no runtime implements.
double activation_flops(const OpContext& c, const std::string& name);

// Element count of output i (after shape inference).
double output_elements(const OpContext& c, size_t i = 0);
// Element count of the dims of `shape` from `from` (inclusive) to `to` (exclusive).
double dims_product(const Shape& shape, size_t from, size_t to);
// The attribute `name`, failing naming the node when it is absent, below `minimum` or over
// kMaxTensorDim (a count that large only overflows what it multiplies).
int64_t required_int_attr(const OpContext& c, const char* name, int64_t minimum);

}  // namespace modelcost
