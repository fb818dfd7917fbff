// The cuDNN descriptors of one convolution call (input, output, bias, filter, convolution,
// activation), set up from a ConvParams and destroyed together: the conv runner of the
// as-written view, the fused conv of the deployed view and ConvTranspose (the data gradient of
// a forward conv) describe their calls the same way.
#pragma once
#include <cudnn.h>

#include <vector>

#include "core/runner.h"
#include "ops/measured_kinds.h"

namespace modelcost::cuda {

// The device tensors of one convolution call: X, W, the bias (nullptr without one) and Y.
struct ConvOperands {
  void *x = nullptr, *w = nullptr, *bias = nullptr, *y = nullptr;
  static ConvOperands of(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, bool has_bias) {
    return {in[0].data, in[1].data, has_bias ? in[2].data : nullptr, out[0].data};
  }
};

struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;  // created by the caller where it fuses an activation

  ConvDescriptors() = default;
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
  ~ConvDescriptors() { reset(); }
  void reset();  // destroys every descriptor made
  // (Re)creates x, y, w and conv (b too where `bias`) for `c` in `format`, tensor-core math for
  // fp16/bf16 and cuDNN's default for fp32 (TF32, as PyTorch's cuDNN default allows).
  void configure(const ConvParams& c, cudnnTensorFormat_t format, int32_t onnx_dtype, bool bias);
  // (Re)creates b: one value per channel of `channels`, broadcast over the other dims.
  void configure_bias(int64_t channels, size_t spatial_dims, cudnnTensorFormat_t format, int32_t onnx_dtype);
};

}  // namespace modelcost::cuda
