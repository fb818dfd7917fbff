#include "conv/conv_descriptors.h"

#include "core/cudnn_util.h"

namespace modelcost::cuda {

void ConvDescriptors::reset() {
  if (x) cudnnDestroyTensorDescriptor(x);
  if (y) cudnnDestroyTensorDescriptor(y);
  if (b) cudnnDestroyTensorDescriptor(b);
  if (w) cudnnDestroyFilterDescriptor(w);
  if (conv) cudnnDestroyConvolutionDescriptor(conv);
  if (act) cudnnDestroyActivationDescriptor(act);
  x = y = b = nullptr;
  w = nullptr;
  conv = nullptr;
  act = nullptr;
}

void ConvDescriptors::configure(const ConvParams& c, cudnnTensorFormat_t format, int32_t onnx_dtype, bool bias) {
  reset();
  const cudnnDataType_t type = cudnn_type(onnx_dtype);
  MC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
  MC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
  MC_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
  MC_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  set_tensor(x, format, type, nchw_dims(c.batch, c.in_channels, c.in_size));
  set_tensor(y, format, type, nchw_dims(c.batch, c.out_channels, c.out_size));
  const std::vector<int> w_dims = nchw_dims(c.out_channels, c.in_channels / c.groups, c.kernel);
  MC_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w, type, format, static_cast<int>(w_dims.size()), w_dims.data()));
  const size_t n = c.kernel.size();
  std::vector<int64_t> pad_begin(c.pads.begin(), c.pads.begin() + n);
  const std::vector<int> pads = spatial_params(pad_begin, 0, n), strides = spatial_params(c.strides, 1, n),
                         dilations = spatial_params(c.dilations, 1, n);
  MC_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv, static_cast<int>(pads.size()), pads.data(), strides.data(),
                                                 dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  MC_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, static_cast<int>(c.groups)));
  MC_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, onnx_dtype == 1 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH));
  if (bias) configure_bias(c.out_channels, n, format, onnx_dtype);
}

void ConvDescriptors::configure_bias(int64_t channels, size_t spatial_dims, cudnnTensorFormat_t format,
                                     int32_t onnx_dtype) {
  if (b) cudnnDestroyTensorDescriptor(b);
  b = nullptr;
  MC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&b));
  set_tensor(b, format, cudnn_type(onnx_dtype), nchw_dims(1, channels, std::vector<int64_t>(spatial_dims, 1)));
}

}  // namespace modelcost::cuda
