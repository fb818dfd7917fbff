#include "ops/defs/nn_common.h"

#include <algorithm>

namespace modelcost {

double Window::kernel_size() const { return product(kernel); }

Shape dims_from(const Shape& s, size_t from) {
  return from >= s.size() ? Shape{} : Shape(s.begin() + static_cast<std::ptrdiff_t>(from), s.end());
}

double product(const std::vector<int64_t>& dims) {
  double p = 1;
  for (int64_t d : dims) p *= static_cast<double>(d);
  return p;
}

void require_rank_at_least(const OpContext& c, size_t i, size_t min_rank, const char* what) {
  if (c.in_rank(i) < min_rank)
    c.fail(std::string(what) + " must have rank >= " + std::to_string(min_rank) + ", got " +
           shape_to_string(c.in_shape(i)));
}

void require_rank(const OpContext& c, size_t i, size_t rank, const char* what) {
  if (c.in_rank(i) != rank)
    c.fail(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + shape_to_string(c.in_shape(i)));
}

namespace {
std::vector<int64_t> ints_or(const OpContext& c, const char* name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = c.attr_ints(name);
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (v.size() != n)
    c.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  return v;
}

void require_positive(const OpContext& c, const char* name, const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x <= 0 || x > kMaxTensorDim) c.fail(std::string(name) + " must be positive (and at most 2^50), got " + shape_to_string(v));
}

void require_in_range(const OpContext& c, const char* name, const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < -kMaxTensorDim || x > kMaxTensorDim) c.fail(std::string(name) + " must be in [-2^50, 2^50], got " + shape_to_string(v));
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }  // a >= 0, b > 0
}  // namespace

Window read_window(const OpContext& c, size_t spatial_rank, const std::vector<int64_t>& kernel) {
  Window w;
  w.kernel = c.attr_ints("kernel_shape");
  if (w.kernel.empty()) {
    if (kernel.empty()) c.fail("kernel_shape attribute is required");
    w.kernel = kernel;
  } else if (!kernel.empty() && w.kernel != kernel) {
    c.fail("kernel_shape " + shape_to_string(w.kernel) + " does not match the weight's kernel " + shape_to_string(kernel));
  }
  if (w.kernel.size() != spatial_rank)
    c.fail("kernel_shape " + shape_to_string(w.kernel) + " does not match the input's " + std::to_string(spatial_rank) +
           " spatial dims");
  require_positive(c, "kernel_shape", w.kernel);
  w.strides = ints_or(c, "strides", spatial_rank, 1);
  require_positive(c, "strides", w.strides);
  w.dilations = ints_or(c, "dilations", spatial_rank, 1);
  require_positive(c, "dilations", w.dilations);
  w.pads = ints_or(c, "pads", 2 * spatial_rank, 0);
  require_in_range(c, "pads", w.pads);
  for (size_t i = 0; i < spatial_rank; ++i)  // so that extent() and the window arithmetic stay in int64
    checked_dim(c, static_cast<double>(w.kernel[i] - 1) * static_cast<double>(w.dilations[i]) + 1, "the dilated kernel");
  w.auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (w.auto_pad.empty()) w.auto_pad = "NOTSET";
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" && w.auto_pad != "VALID")
    c.fail("unknown auto_pad '" + w.auto_pad + "'");
  w.ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  return w;
}

Shape window_output(const OpContext& c, const Window& w, const Shape& in) {
  Shape out(w.rank());
  for (size_t i = 0; i < w.rank(); ++i) {
    const int64_t s = w.strides[i], k = w.extent(i);
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      out[i] = ceil_div(in[i], s);  // padding is chosen to make this hold
      continue;
    }
    const int64_t begin = w.auto_pad == "VALID" ? 0 : w.pads[i];
    const int64_t end = w.auto_pad == "VALID" ? 0 : w.pads[i + w.rank()];
    const int64_t span = in[i] + begin + end - k;  // room the window slides over
    if (span < 0)
      c.fail("kernel extent " + std::to_string(k) + " is larger than the padded input " +
             std::to_string(in[i] + begin + end) + " (spatial dim " + std::to_string(i) + ")");
    out[i] = (w.ceil_mode ? ceil_div(span, s) : span / s) + 1;
    // As PyTorch and ONNX (opset 19 text): a last window that would start in the end padding is dropped.
    if (w.ceil_mode && (out[i] - 1) * s >= in[i] + begin) --out[i];
  }
  return out;
}

std::vector<int64_t> resolved_pads(const Window& w, const Shape& in, const Shape& out) {
  const size_t n = w.rank();
  if (w.auto_pad == "NOTSET") return w.pads;
  std::vector<int64_t> pads(2 * n, 0);
  if (w.auto_pad == "VALID") return pads;
  for (size_t i = 0; i < n; ++i) {
    const int64_t total = std::max<int64_t>(0, (out[i] - 1) * w.strides[i] + w.extent(i) - in[i]);
    const int64_t small = total / 2, large = total - small;
    pads[i] = w.auto_pad == "SAME_LOWER" ? large : small;
    pads[i + n] = w.auto_pad == "SAME_LOWER" ? small : large;
  }
  return pads;
}

ConvParams conv_params(const OpContext& c, size_t x_input, size_t w_input, size_t bias_input) {
  const Shape& x = c.in_shape(x_input);
  const Shape& w = c.in_shape(w_input);
  const Window win = read_window(c, x.size() - 2, dims_from(w, 2));
  ConvParams p;
  p.spatial = static_cast<int>(x.size()) - 2;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = w[0];
  p.groups = c.attr_int("group", 1);
  p.in_size = dims_from(x, 2);
  p.kernel = win.kernel;
  p.out_size = dims_from(c.out(0).shape, 2);
  p.strides = win.strides;
  p.dilations = win.dilations;
  p.pads = resolved_pads(win, p.in_size, p.out_size);
  p.has_bias = c.has_input(bias_input);
  return p;
}

// Input positions along one spatial dim that some window reads: where the stride steps past the
// (undilated) kernel, the windows skip the positions between them (a 1x1 conv at stride 2 reads a
// quarter of its input); otherwise every position.
static double positions_read(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin) {
  if (stride <= kernel || (dilation != 1 && kernel != 1)) return static_cast<double>(in);
  double read = 0;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t first = o * stride - pad_begin;
    read += static_cast<double>(std::max<int64_t>(0, std::min(first + kernel, in) - std::max<int64_t>(first, 0)));
  }
  return read;
}

double conv_bytes_read(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const Shape& y = c.out(0).shape;
  if (std::any_of(x.begin(), x.end(), [](int64_t d) { return d < 0; }) || y.size() != x.size()) return -1;  // default
  const Window win = read_window(c, x.size() - 2, dims_from(c.in_shape(1), 2));
  const std::vector<int64_t> pads = resolved_pads(win, dims_from(x, 2), dims_from(y, 2));
  double read = static_cast<double>(x[0] * x[1]);
  for (size_t i = 0; i < win.rank(); ++i)
    read *= positions_read(x[i + 2], y[i + 2], win.kernel[i], win.strides[i], win.dilations[i], pads[i]);
  double bytes = read * dtype_size(c.in_dtype(0));
  for (size_t k = 1; k < c.num_inputs(); ++k)
    if (c.has_input(k)) bytes += element_count(c.in_shape(k)) * dtype_size(c.in_dtype(k));
  return bytes;
}

}  // namespace modelcost
