// A dense conv with its epilogue in one cuDNN call: cudnnConvolutionBiasActivationForward,
// y = act(conv(x, w) + z + bias) with z the residual (alpha2 = 1) and act ReLU or identity,
// channels-last for fp16/bf16 as deployments run it. cuDNN runs the identity activation only with
// IMPLICIT_PRECOMP_GEMM; with ReLU the heuristic's first algorithms are tried too and the fastest
// kept (timed as measurements time, like cudnn.benchmark), holding only its own workspace.
#include <limits>

#include "conv/conv_descriptors.h"
#include "core/cudnn_util.h"
#include "core/kernels.h"
#include "deployed/group_runner.h"
#include "timing/sampler.h"

namespace modelcost::cuda {
namespace {

class FusedConvKernel : public GroupKernel {
 public:
  // False where cuDNN runs no algorithm for this configuration.
  bool prepare(const GroupView& view, const MatrixEpilogue& e, const ConvParams& c) {
    handle_ = view.cuda.cudnn;
    const NodeSpec& spec = view.spec(e.anchor);
    const Node& node = view.node(e.anchor);
    const int32_t dtype = spec.outputs[0].dtype;
    const cudnnTensorFormat_t format = dtype != 1 && view.cuda.channels_last_half ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    channels_last_ = format == CUDNN_TENSOR_NHWC;
    x_ptr_ = view.buffers.data(node.inputs[0]);
    w_ptr_ = view.buffers.data(node.inputs[1]);
    y_ptr_ = view.buffers.data(e.output);
    z_ptr_ = e.residual >= 0 ? view.buffers.data(e.residual) : y_ptr_;
    alpha2_ = e.residual >= 0 ? 1.f : 0.f;
    const int bias_id = node.inputs.size() > 2 && node.inputs[2] >= 0 ? node.inputs[2] : e.bias;
    if (bias_id >= 0) {
      b_ptr_ = view.buffers.data(bias_id);
    } else {  // the call needs a bias: zeros
      zero_bias_.resize(static_cast<size_t>(c.out_channels * dtype_size(dtype)));
      MC_CUDA_CHECK(cudaMemsetAsync(zero_bias_.data(), 0, zero_bias_.bytes(), view.cuda.stream));
      b_ptr_ = zero_bias_.data();
    }
    if (e.column_scale >= 0) {  // a layer scale folded into a copy of the weight and the bias
      MatMulParams rows;  // the weight as [out channels, the rest], each output channel one row
      rows.n = c.out_channels;
      rows.k = spec.inputs[1].elements() / std::max<int64_t>(c.out_channels, 1);
      rows.trans_b = true;
      rows.bias = node.inputs.size() > 2 && node.inputs[2] >= 0 ? MatMulParams::Bias::kRow : MatMulParams::Bias::kNone;
      folded_ = fold_column_scale_into_weights(view, e, rows);
      w_ptr_ = folded_.weights.data();
      b_ptr_ = folded_.bias.data();
    }
    d_.configure(c, format, dtype, /*bias=*/true);
    MC_CUDNN_CHECK(cudnnCreateActivationDescriptor(&d_.act));
    relu_ = e.activation == EpilogueActivation::kRelu;
    clipped_ = e.activation == EpilogueActivation::kClippedRelu;
    MC_CUDNN_CHECK(cudnnSetActivationDescriptor(
        d_.act, relu_ ? CUDNN_ACTIVATION_RELU : clipped_ ? CUDNN_ACTIVATION_CLIPPED_RELU : CUDNN_ACTIVATION_IDENTITY,
        CUDNN_NOT_PROPAGATE_NAN, clipped_ ? e.clip : 0.0));
    residual_ = e.residual >= 0;
    memo_key_ = "cudnn fused conv|" + measurement_key(spec) + "|" + implementation();
    return choose_algorithm(view.cuda);
  }

  void launch(cudaStream_t stream) override {
    MC_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    MC_CUDNN_CHECK(call());
  }

  std::string implementation() const override {
    return std::string("cudnn fused conv+bias") + (folded_.weights.data() ? "+folded channel scale" : "") +
           (residual_ ? "+add" : "") + (relu_ ? "+relu" : "") + (clipped_ ? "+relu6" : "") +
           (channels_last_ ? " NHWC" : " NCHW") + " algo " + std::to_string(static_cast<int>(algo_));
  }

 private:
  cudnnStatus_t call() {
    const float one = 1.f;
    return cudnnConvolutionBiasActivationForward(handle_, &one, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, algo_, workspace_.data(),
                                                 workspace_bytes_, &alpha2_, d_.y, z_ptr_, d_.b, b_ptr_, d_.act, d_.y, y_ptr_);
  }

  bool choose_algorithm(CudaContext& ctx) {
    std::vector<cudnnConvolutionFwdAlgo_t> candidates = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM};
    if (relu_ || clipped_) {
      int count = 0;
      MC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &count));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
      int returned = 0;
      MC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, d_.x, d_.w, d_.conv, d_.y, count, &returned, perf.data()));
      for (int i = 0; i < returned && candidates.size() < 4; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].algo != candidates.front()) candidates.push_back(perf[i].algo);
    }
    MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
    double best_us = std::numeric_limits<double>::infinity();
    cudnnConvolutionFwdAlgo_t best{};
    size_t best_bytes = 0;
    for (cudnnConvolutionFwdAlgo_t algo : candidates) {
      size_t bytes = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(handle_, d_.x, d_.w, d_.conv, d_.y, algo, &bytes) != CUDNN_STATUS_SUCCESS ||
          bytes > ctx.max_timed_workspace_bytes)
        continue;
      workspace_.resize(std::max<size_t>(bytes, 16));
      algo_ = algo;
      workspace_bytes_ = bytes;
      if (call() != CUDNN_STATUS_SUCCESS) {
        cudaGetLastError();
        continue;
      }
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream,
                                        {memo_key_ + " algo " + std::to_string(static_cast<int>(algo)), best_us});
      if (us < best_us) {
        best_us = us;
        best = algo;
        best_bytes = bytes;
      }
    }
    if (!(best_us < std::numeric_limits<double>::infinity())) return false;
    algo_ = best;
    workspace_bytes_ = best_bytes;
    if (workspace_.bytes() > std::max<size_t>(best_bytes, 16)) workspace_ = DeviceBuffer(std::max<size_t>(best_bytes, 16));
    return true;
  }

  cudnnHandle_t handle_ = nullptr;
  ConvDescriptors d_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  DeviceBuffer workspace_, zero_bias_;
  size_t workspace_bytes_ = 0;
  const void *x_ptr_ = nullptr, *w_ptr_ = nullptr, *z_ptr_ = nullptr, *b_ptr_ = nullptr;
  void* y_ptr_ = nullptr;
  WeightsWithBatchNorm folded_;  // the weight and bias with a layer scale folded in
  float alpha2_ = 0;
  bool relu_ = false, clipped_ = false, residual_ = false, channels_last_ = false;
  std::string memo_key_;  // the work and epilogue, for quick_median_us's memo
};

}  // namespace

std::unique_ptr<GroupKernel> make_fused_conv_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why) {
  const auto& conv = std::get<ConvParams>(view.plan(e.anchor));
  const EpilogueActivation act = e.activation;
  if (act != EpilogueActivation::kNone && act != EpilogueActivation::kRelu && act != EpilogueActivation::kClippedRelu) {
    *why = "cuDNN's fused conv call takes ReLU (and clipped ReLU where it runs it) only";
    return nullptr;
  }
  auto kernel = std::make_unique<FusedConvKernel>();
  if (!kernel->prepare(view, e, conv)) {
    *why = "cuDNN runs no fused conv+bias+activation for this shape";
    return nullptr;
  }
  return kernel;
}

}  // namespace modelcost::cuda
