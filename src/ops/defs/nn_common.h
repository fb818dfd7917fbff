// Shared by the nn family files (nn.cpp, nn_pool.cpp, nn_norm.cpp, nn_rnn.cpp, nn_detection.cpp):
// the sliding-window geometry of convolutions and pools, and the per-file registration hooks
// that register_nn_ops calls.
#pragma once
#include <string>
#include <vector>

#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {

void register_nn_pool_ops(OpRegistry& r);
void register_nn_norm_ops(OpRegistry& r);
void register_nn_rnn_ops(OpRegistry& r);
void register_nn_detection_ops(OpRegistry& r);

// A sliding window over the spatial dims of an [N, C, D1..Dn] tensor, as ONNX's Conv and pool
// attributes describe it (defaults filled in, every value checked).
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;    // default 1
  std::vector<int64_t> dilations;  // default 1
  std::vector<int64_t> pads;       // [begin_1..begin_n, end_1..end_n], default 0
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;          // pools: round the window count up

  size_t rank() const { return kernel.size(); }
  int64_t extent(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }  // dilated kernel
  double kernel_size() const;  // product of the kernel dims
};

// Reads kernel_shape (or takes `kernel` when the attribute is absent; kernel empty = required),
// strides, dilations, pads, auto_pad and ceil_mode. Fails on non-positive strides, dilations or
// kernel dims, on attribute lists of the wrong length and on an unknown auto_pad.
Window read_window(const OpContext& c, size_t spatial_rank, const std::vector<int64_t>& kernel);
// Output spatial dims of the window sliding over `in` (Conv and pool formula, auto_pad and
// ceil_mode included). Fails when the dilated kernel is larger than the padded input.
Shape window_output(const OpContext& c, const Window& w, const Shape& in_spatial);
// The pads [begin..., end...] the window applies to `in_spatial` for output `out_spatial`: the
// explicit pads, none for VALID, or those SAME_UPPER / SAME_LOWER choose (the larger half at the
// end, resp. the beginning). ceil_mode's last partial window is not a pad.
std::vector<int64_t> resolved_pads(const Window& w, const Shape& in_spatial, const Shape& out_spatial);

// The bytes a Conv-like node with NCHW X (input 0) and W (input 1) reads: the input elements
// some window reads (where the stride steps past the kernel, the positions between windows are
// skipped: a 1x1 conv at stride 2 reads a quarter of X), then every other input in full.
double conv_bytes_read(const OpContext& c);

// The geometry of a Conv-like node (NCHW X, [M, C/group, kernel...] W) its shape rule read.
ConvParams conv_params(const OpContext& c, size_t x_input, size_t w_input, size_t bias_input);

// Dims [from, end) of a shape, and their product.
Shape dims_from(const Shape& s, size_t from);
double product(const std::vector<int64_t>& dims);
// Fails unless input i has rank >= min_rank (names the input in the message).
void require_rank_at_least(const OpContext& c, size_t i, size_t min_rank, const char* what);
void require_rank(const OpContext& c, size_t i, size_t rank, const char* what);

}  // namespace modelcost
