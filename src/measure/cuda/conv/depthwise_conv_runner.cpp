// The project's own depthwise convolution (depthwise_kernels.cu) as a runner: a candidate beside
// cuDNN for depthwise convs, where cuDNN 9's kernels for large kernels (ConvNeXt's 7x7) in
// channels-last fp16 run far off the roofline. Channels-last needs the weights as [KH, KW, C]:
// prepare() transposes them once, outside the timed launches (a deployment stores them so), and
// times the channels-last algorithms that run the shape, keeping the fastest: a row kernel's few
// threads leave most SMs idle at batch 1 (EfficientNet-B0's first 3x3 at 112x112, 32 channels:
// 49 blocks on 132 SMs), where one output pixel a thread fills them.
#include <limits>

#include "core/device_buffer.h"
#include "core/kernels.h"
#include "core/runner.h"
#include "timing/sampler.h"

namespace modelcost::cuda {
namespace {

#define MC_OP_NAME(name, onnx, flops, expr) \
  case ElementwiseOp::k##name: return #name;
const char* activation_name(ElementwiseOp op) {
  switch (op) {
    MC_UNARY_OPS(MC_OP_NAME)
    default: return "?";
  }
}
#undef MC_OP_NAME

class DepthwiseConvRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  DepthwiseConvRunner(const NodeSpec& spec, const ConvParams& conv, const DepthwiseEpilogue& epilogue)
      : work_key_(measurement_key(spec)), c_(conv), epilogue_(epilogue) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    type_ = element_type(out[0].spec.dtype);
    tensors_ = {in[0].data, in[1].data, c_.has_bias ? in[2].data : nullptr, out[0].data};
    g_ = DepthwiseGeometry{c_.batch, c_.out_channels, c_.in_size[0], c_.in_size[1], c_.out_size[0], c_.out_size[1],
                           static_cast<int>(c_.kernel[0]), static_cast<int>(c_.kernel[1]),
                           static_cast<int>(c_.strides[0]), static_cast<int>(c_.strides[1]),
                           static_cast<int>(c_.pads[0]), static_cast<int>(c_.pads[1]),
                           static_cast<int>(c_.dilations[0]), static_cast<int>(c_.dilations[1]), epilogue_};
    g_.channels_last = out[0].spec.dtype != 1 && ctx.channels_last_half;
    g_.multiplier = c_.out_channels / c_.in_channels;
    g_.multiprocessors = ctx.multiprocessors;
    if (!g_.channels_last) return;
    const int64_t taps = c_.kernel[0] * c_.kernel[1];
    transposed_.resize(static_cast<size_t>(taps * c_.out_channels) * element_bytes(type_));
    StridedCopy to_taps_by_channel;  // [C, taps] -> [taps, C]
    to_taps_by_channel.dims = {taps, c_.out_channels};
    to_taps_by_channel.src_strides = {1, taps};
    to_taps_by_channel.dst_strides = {c_.out_channels, 1};
    launch_strided_copy(static_cast<int>(element_bytes(type_)), tensors_.w, transposed_.data(), to_taps_by_channel, ctx.stream);
    tensors_.w = transposed_.data();
    if (ctx.timing) choose_algorithm(ctx);
  }

  void launch(cudaStream_t stream) override { launch_depthwise_conv(type_, g_, tensors_, stream); }

  std::string implementation() const override {
    return std::string("own depthwise conv ") + (g_.channels_last ? "NHWC" : "NCHW") + (tensors_.bias ? " +bias" : "") +
           (epilogue_.activation != ElementwiseOp::kIdentity ? std::string(" +") + activation_name(epilogue_.activation) : "") +
           (epilogue_.scale ? " +scale,shift" : "") + (epilogue_.residual ? " +residual" : "") +
           (g_.algorithm != DepthwiseAlgorithm::kAuto ? std::string(" (") + depthwise_algorithm_name(g_.algorithm) + ")" : "");
  }

 private:
  // Each algorithm is timed once per shape and epilogue (the memo), as the other timed choices are.
  void choose_algorithm(CudaContext& ctx) {
    const std::string key = "own depthwise|" + work_key_ + "|" + implementation() + "|";
    double best_us = std::numeric_limits<double>::infinity();
    DepthwiseAlgorithm best = DepthwiseAlgorithm::kAuto;
    for (DepthwiseAlgorithm algorithm : depthwise_algorithms(g_)) {
      g_.algorithm = algorithm;
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream,
                                        {key + depthwise_algorithm_name(algorithm), best_us});
      if (us < best_us) {
        best_us = us;
        best = algorithm;
      }
    }
    g_.algorithm = best;
  }

  std::string work_key_;
  ConvParams c_;
  DepthwiseEpilogue epilogue_;
  ElementType type_ = ElementType::kFloat32;
  DepthwiseGeometry g_{};
  DepthwiseOperands tensors_;
  DeviceBuffer transposed_;
};

}  // namespace

// A channel multiplier above 1 (FastViT's downsampling: 2 filters per input channel) counts too.
bool is_depthwise_2d(const ConvParams& c) {
  return c.spatial == 2 && c.groups > 1 && c.groups == c.in_channels && c.out_channels % c.in_channels == 0;
}

std::unique_ptr<OperatorRunner> make_depthwise_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason,
                                                           const DepthwiseEpilogue& epilogue) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!is_depthwise_2d(conv) || !takes_dtype(DepthwiseConvRunner::kDtypes, dtype)) {
    *reason = "not a float 2-D depthwise conv";
    return nullptr;
  }
  if (!depthwise_activation_supported(epilogue.activation)) {
    *reason = "no depthwise epilogue for this activation";
    return nullptr;
  }
  return std::make_unique<DepthwiseConvRunner>(spec, conv, epilogue);
}

}  // namespace modelcost::cuda
