// ConvTranspose through cuDNN's backward-data convolution (the data gradient of the Conv from
// Y to X, as PyTorch runs ConvTranspose), then the bias add. Channels-last for fp16/bf16 as the
// forward convs; the algorithm from cuDNN's heuristics, or with --autotune cudnnFind's fastest.
#include <utility>

#include "conv/conv_descriptors.h"
#include "core/cudnn_util.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

class ConvTransposeRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  ConvTransposeRunner(const NodeSpec& spec, const ConvParams& conv) : spec_(spec), c_(conv) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    handle_ = ctx.cudnn;
    tensors_ = ConvOperands::of(in, out, c_.has_bias);
    const int32_t dtype = out[0].spec.dtype;
    channels_last_ = dtype != 1 && ctx.channels_last_half;
    const cudnnTensorFormat_t format = channels_last_ ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    // The forward conv maps Y (out_channels) to X (in_channels): its filter is W as ONNX stores
    // it, its input descriptor (d_.x) is Y's and its output descriptor (d_.y) is X's.
    ConvParams forward = c_;
    std::swap(forward.in_channels, forward.out_channels);
    std::swap(forward.in_size, forward.out_size);
    d_.configure(forward, format, dtype, /*bias=*/false);
    if (tensors_.bias) d_.configure_bias(c_.out_channels, c_.kernel.size(), format, dtype);
    choose_algorithm(ctx);
  }

  void launch(cudaStream_t stream) override {
    MC_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    const float one = 1.f, zero = 0.f;
    MC_CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, &one, d_.w, tensors_.w, d_.y, tensors_.x, d_.conv, algo_,
                                                workspace_.data(), workspace_bytes_, &zero, d_.x, tensors_.y));
    if (tensors_.bias) MC_CUDNN_CHECK(cudnnAddTensor(handle_, &one, d_.b, tensors_.bias, &one, d_.x, tensors_.y));
  }

  std::string implementation() const override {
    return std::string("cudnn conv backward-data ") + (channels_last_ ? "NHWC" : "NCHW") + " algo " +
           std::to_string(static_cast<int>(algo_)) + (tuned_ ? " (autotuned)" : " (heuristic)");
  }

 private:
  void choose_algorithm(CudaContext& ctx) {
    int count = 0;
    MC_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle_, &count));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(count));
    int returned = 0;
    if (ctx.autotune) {
      DeviceBuffer scratch(ctx.max_workspace_bytes);
      MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
      MC_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(handle_, d_.w, tensors_.w, d_.y, tensors_.x, d_.conv, d_.x,
                                                                 tensors_.y, count, &returned, perf.data(), scratch.data(),
                                                                 scratch.bytes()));
      tuned_ = true;
    } else {
      MC_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, d_.w, d_.y, d_.conv, d_.x, count, &returned, perf.data()));
    }
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ctx.max_workspace_bytes) continue;
      algo_ = perf[i].algo;
      MC_CUDNN_CHECK(cudnnSetConvolutionMathType(d_.conv, perf[i].mathType));
      workspace_bytes_ = perf[i].memory;
      workspace_.resize(workspace_bytes_);
      return;
    }
    throw Error(kExitRuntime, "cuDNN offers no backward-data algorithm for this ConvTranspose");
  }

  NodeSpec spec_;
  ConvParams c_;
  cudnnHandle_t handle_ = nullptr;
  ConvDescriptors d_;
  cudnnConvolutionBwdDataAlgo_t algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  size_t workspace_bytes_ = 0;
  DeviceBuffer workspace_;
  ConvOperands tensors_;
  bool channels_last_ = false, tuned_ = false;
};

// The forward conv from Y with X's geometry must give back X's size (cuDNN pads both sides equally).
bool forward_gives_input(const ConvParams& c) {
  const size_t n = c.kernel.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t extent = (c.kernel[i] - 1) * c.dilations[i] + 1;
    if ((c.out_size[i] + 2 * c.pads[i] - extent) / c.strides[i] + 1 != c.in_size[i]) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<OperatorRunner> make_conv_transpose_runner(const NodeSpec& spec, const ConvTransposePlan& plan,
                                                           std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!accepts_dtype(ConvTransposeRunner::kDtypes, dtype, "ConvTranspose in ", reason)) return nullptr;
  if (!forward_gives_input(plan.conv)) {
    *reason = "ConvTranspose whose pads cuDNN cannot take (the end pad exceeds the begin pad by more than output_padding)";
    return nullptr;
  }
  return std::make_unique<ConvTransposeRunner>(spec, plan.conv);
}

}  // namespace modelcost::cuda
