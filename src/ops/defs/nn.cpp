// Op rules: nn family, convolutions (Conv, ConvTranspose, DeformConv, Col2Im). Pools,
// normalisations, recurrent and detection ops live in nn_pool.cpp, nn_norm.cpp, nn_rnn.cpp and
// nn_detection.cpp; register_nn_ops registers them all. Formulas: docs/ops/nn.md.
#include <algorithm>
#include <cmath>

#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

// Checks the [N, C, spatial...] input against the [M, C/group, kernel...] weight of Conv and
// DeformConv, and returns the window read from the attributes.
// The checks Conv, DeformConv and ConvTranspose share: X of rank >= 3, W of X's rank, a positive
// group, which it returns.
int64_t check_conv_ranks_and_group(const OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  if (w.size() != x.size())
    c.fail("weight W " + shape_to_string(w) + " must have the rank of X " + shape_to_string(x));
  const int64_t group = c.attr_int("group", 1);
  if (group <= 0) c.fail("group must be positive, got " + std::to_string(group));
  return group;
}

Window check_conv_operands(const OpContext& c, const char* bias_name, size_t bias_input) {
  const int64_t group = check_conv_ranks_and_group(c);
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  const int64_t expected = dim_product(c, w[1], group, "W's channels x group");
  if (x[1] != expected)
    c.fail("X has " + std::to_string(x[1]) + " channels but W " + shape_to_string(w) + " with group " +
           std::to_string(group) + " expects " + std::to_string(expected));
  if (w[0] % group != 0)
    c.fail(std::to_string(w[0]) + " output channels are not divisible by group " + std::to_string(group));
  if (c.has_input(bias_input) && element_count(c.in_shape(bias_input)) != static_cast<double>(w[0]))
    c.fail(std::string(bias_name) + " " + shape_to_string(c.in_shape(bias_input)) + " must have " +
           std::to_string(w[0]) + " elements (output channels)");
  return read_window(c, x.size() - 2, dims_from(w, 2));
}

void infer_conv(OpContext& c) {
  const Window win = check_conv_operands(c, "bias B", 2);
  const Shape& x = c.in_shape(0);
  Shape out = {x[0], c.in_shape(1)[0]};
  for (int64_t d : window_output(c, win, dims_from(x, 2))) out.push_back(d);
  c.set_output(0, c.in_dtype(0), out);
}

// Each output element is a dot product over (C/group) x kernel inputs.
double conv_macs(const OpContext& c) {
  const Shape& w = c.in_shape(1);
  return element_count(c.out(0).shape) * static_cast<double>(w[1]) * product(dims_from(w, 2));
}

OpCost cost_conv(const OpContext& c) {
  OpCost cost;
  cost.macs = conv_macs(c);
  cost.flops = 2 * cost.macs + (c.has_input(2) ? element_count(c.out(0).shape) : 0);
  cost.bytes_read = conv_bytes_read(c);
  return cost;
}

// Measured through the conv runners (cuDNN, our depthwise kernel): the window the shape rule read.
OpPlan plan_conv(const OpContext& c) {
  if (!float_data(c) || !dtype_is_float(c.in_dtype(1))) return unsupported("Conv on non-float tensors");
  if (c.in_rank(0) > 5) return unsupported("Conv of more than 3 spatial dims");
  return conv_params(c, 0, 1, 2);
}

// ConvTranspose: X [N, C, in...], W [C, M/group, kernel...], output [N, M, out...].
void infer_conv_transpose(OpContext& c) {
  const int64_t group = check_conv_ranks_and_group(c);
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  if (w[0] != x[1])
    c.fail("X has " + std::to_string(x[1]) + " channels but W " + shape_to_string(w) + " expects " + std::to_string(w[0]));
  if (x[1] % group != 0)
    c.fail(std::to_string(x[1]) + " input channels are not divisible by group " + std::to_string(group));
  const int64_t out_channels = dim_product(c, w[1], group, "W's channels x group");
  if (c.has_input(2) && element_count(c.in_shape(2)) != static_cast<double>(out_channels))
    c.fail("bias B " + shape_to_string(c.in_shape(2)) + " must have " + std::to_string(out_channels) + " elements");
  const size_t n = x.size() - 2;
  const Window win = read_window(c, n, dims_from(w, 2));
  std::vector<int64_t> output_padding = c.attr_ints("output_padding");
  if (output_padding.empty()) output_padding.assign(n, 0);
  if (output_padding.size() != n) c.fail("output_padding must have " + std::to_string(n) + " values");
  for (size_t i = 0; i < n; ++i)
    if (output_padding[i] < 0 || output_padding[i] >= std::max(win.strides[i], win.dilations[i]))
      c.fail("output_padding " + shape_to_string(output_padding) + " must be >= 0 and below the stride or dilation");

  Shape out = {x[0], out_channels};
  const std::vector<int64_t> output_shape = c.attr_ints("output_shape");
  if (!output_shape.empty()) {
    // Some exporters write the full [N, M, spatial...] shape, the spec only the spatial dims.
    if (output_shape.size() != n && output_shape.size() != n + 2)
      c.fail("output_shape " + shape_to_string(output_shape) + " must have " + std::to_string(n) + " values");
    for (size_t i = output_shape.size() - n; i < output_shape.size(); ++i) out.push_back(output_shape[i]);
  } else {
    const bool same = win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER";
    const bool valid = win.auto_pad == "VALID";
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x[2 + i];
      int64_t d = same ? in * win.strides[i]
                       : win.strides[i] * (in - 1) + output_padding[i] + win.extent(i) -
                             (valid ? 0 : win.pads[i] + win.pads[i + n]);
      if (d <= 0) c.fail("pads " + shape_to_string(win.pads) + " leave no output in spatial dim " + std::to_string(i));
      out.push_back(d);
    }
  }
  for (size_t i = 2; i < out.size(); ++i)
    if (out[i] <= 0) c.fail("output_shape " + shape_to_string(output_shape) + " must be positive");
  c.set_output(0, c.in_dtype(0), out);
}

// Every input pixel scatters a (M/group) x kernel block into the output.
OpCost cost_conv_transpose(const OpContext& c) {
  const Shape& w = c.in_shape(1);
  OpCost cost;
  cost.macs = element_count(c.in_shape(0)) * static_cast<double>(w[1]) * product(dims_from(w, 2));
  cost.flops = 2 * cost.macs + (c.has_input(2) ? element_count(c.out(0).shape) : 0);
  return cost;
}

// The window of ConvTranspose: explicit pads (or VALID), the output as the shape rule sized it;
// the padding output_shape or SAME would imply is not resolved here.
OpPlan plan_conv_transpose(const OpContext& c) {
  if (!float_data(c) || !dtype_is_float(c.in_dtype(1))) return unsupported("ConvTranspose on non-float tensors");
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  if (x.size() > 5) return unsupported("ConvTranspose of more than 3 spatial dims");
  const Window win = read_window(c, x.size() - 2, dims_from(w, 2));
  if (win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER" || c.has_attr("output_shape"))
    return unsupported("ConvTranspose sized by output_shape or SAME padding");
  ConvTransposePlan p;
  ConvParams& conv = p.conv;
  conv.spatial = static_cast<int>(x.size()) - 2;
  conv.batch = x[0];
  conv.in_channels = x[1];
  conv.groups = c.attr_int("group", 1);
  conv.out_channels = w[1] * conv.groups;
  conv.in_size = dims_from(x, 2);
  conv.kernel = win.kernel;
  conv.out_size = dims_from(c.out(0).shape, 2);
  conv.strides = win.strides;
  conv.dilations = win.dilations;
  conv.pads = win.auto_pad == "VALID" ? std::vector<int64_t>(win.pads.size(), 0) : win.pads;
  conv.has_bias = c.has_input(2);
  return p;
}

// DeformConv (opset 19): X, W, offset [N, offset_group*n*prod(kernel), out...], B, mask.
void infer_deform_conv(OpContext& c) {
  if (c.has_attr("auto_pad")) c.fail("DeformConv has no auto_pad attribute");
  const Window win = check_conv_operands(c, "bias B", 3);
  const Shape& x = c.in_shape(0);
  const int64_t offset_group = c.attr_int("offset_group", 1);
  if (offset_group <= 0 || x[1] % offset_group != 0)
    c.fail("offset_group " + std::to_string(offset_group) + " must be positive and divide the " +
           std::to_string(x[1]) + " input channels");
  Shape out = {x[0], c.in_shape(1)[0]};
  const Shape spatial = window_output(c, win, dims_from(x, 2));
  out.insert(out.end(), spatial.begin(), spatial.end());
  const double taps = win.kernel_size();
  const auto check_sampling_input = [&](size_t i, const char* name, double per_tap) {
    if (!c.has_input(i)) return;
    const Shape& s = c.in_shape(i);
    if (s.size() != out.size() || s[0] != x[0] ||
        static_cast<double>(s[1]) != static_cast<double>(offset_group) * per_tap * taps || dims_from(s, 2) != spatial)
      c.fail(std::string(name) + " " + shape_to_string(s) + " does not match offset_group " +
             std::to_string(offset_group) + ", the kernel and the output " + shape_to_string(out));
  };
  check_sampling_input(2, "offset", static_cast<double>(win.rank()));
  check_sampling_input(4, "mask", 1);
  c.set_output(0, c.in_dtype(0), out);
}

// Conv's products plus a bilinear sample (4 multiplies + 3 adds) per input value each output
// reads, and one multiply per sample when a mask is given.
OpCost cost_deform_conv(const OpContext& c) {
  const Shape& w = c.in_shape(1);
  const double kernel = product(dims_from(w, 2));
  const double outputs = element_count(c.out(0).shape);
  const double samples = static_cast<double>(c.in_shape(0)[0] * c.in_shape(0)[1]) * kernel *
                         product(dims_from(c.out(0).shape, 2));
  OpCost cost;
  cost.macs = conv_macs(c);
  cost.flops = 2 * cost.macs + samples * (7 + (c.has_input(4) ? 1 : 0)) + (c.has_input(3) ? outputs : 0);
  return cost;
}

// Col2Im (opset 18): input [N, C*prod(block), L] -> [N, C, image...]; every input value is added
// into the image once.
void infer_col2im(OpContext& c) {
  require_rank(c, 0, 3, "input (N, C*prod(block_shape), L)");
  const std::vector<int64_t> image = c.require_ints(1, "image_shape");
  const std::vector<int64_t> block = c.require_ints(2, "block_shape");
  if (image.size() != block.size() || image.empty())
    c.fail("image_shape " + shape_to_string(image) + " and block_shape " + shape_to_string(block) +
           " must have the same, non-zero length");
  const size_t n = image.size();
  for (int64_t d : image)
    if (d <= 0 || d > kMaxTensorDim) c.fail("image_shape " + shape_to_string(image) + " must be in [1, 2^50]");
  Window w = read_window(c, n, block);
  if (w.auto_pad != "NOTSET") c.fail("Col2Im has no auto_pad attribute");
  const Shape blocks = window_output(c, w, image);
  const Shape& x = c.in_shape(0);
  const double block_size = product(block);
  if (std::fmod(static_cast<double>(x[1]), block_size) != 0)
    c.fail("input dim 1 (" + std::to_string(x[1]) + ") is not divisible by the block size " + shape_to_string(block));
  if (static_cast<double>(x[2]) != product(blocks))
    c.fail("input dim 2 (" + std::to_string(x[2]) + ") must equal the number of blocks " + shape_to_string(blocks));
  Shape out = {x[0], static_cast<int64_t>(static_cast<double>(x[1]) / block_size)};
  out.insert(out.end(), image.begin(), image.end());
  c.set_output(0, c.in_dtype(0), out);
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  r.add(OpForm::kConv, {
      {"", "Conv", infer_conv, cost_conv, plan_conv},
      {"", "DeformConv", infer_deform_conv, cost_deform_conv, not_measured("no GPU kernel yet"), inputs(3, 5)},
  });
  r.add(OpTraits(OpForm::kConv).with_transposed_conv(), {
      {"", "ConvTranspose", infer_conv_transpose, cost_conv_transpose, plan_conv_transpose},
  });
  r.add(OpForm::kOther, {
      {"", "Col2Im", infer_col2im, cost_per_input<1>, not_measured("no GPU kernel yet"), inputs(3, 3)},
  });
  register_nn_pool_ops(r);
  register_nn_norm_ops(r);
  register_nn_rnn_ops(r);
  register_nn_detection_ops(r);
}

}  // namespace modelcost
