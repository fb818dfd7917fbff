// Convolution through cuDNN's convolution API: channels-last for fp16/bf16 (tensor cores, as
// deployments run it), NCHW for fp32 (TF32 allowed as PyTorch's default allows it for cuDNN).
// The algorithm comes from cuDNN's heuristics. A Conv node with a bias is one cuDNN call, as in a
// deployment: cudnnConvolutionBiasActivationForward with the identity activation (which cuDNN
// runs only with IMPLICIT_PRECOMP_GEMM); where cuDNN refuses that, the bias is a second kernel
// (cudnnAddTensor) after the heuristic's algorithm.
// Timed choice instead, as cudnn.benchmark and TensorRT choose: with --autotune for every conv,
// and always for fp16/bf16 convs whose input channels are not a multiple of 8 (tensor cores
// take 8 halves at a time; for a 3-channel image stem the heuristic's channels-last pick can be
// several times off; patch convs over such images go to patch_conv_runner.cpp instead): each
// layout (NHWC, NCHW) with the fused call and with cudnnFind's algorithms plus a bias add is run
// as launch() runs it, timed like a measurement (CUPTI kernel durations), the fastest kept.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "measure/cuda/conv_descriptors.h"
#include "measure/cuda/cudnn_util.h"
#include "measure/cuda/runner.h"
#include "measure/cuda/sampler.h"
#include "measure/cuda/wall_ledger.h"

namespace modelcost::cuda {
namespace {

class CudnnConvRunner : public OperatorRunner {
 public:
  CudnnConvRunner(const NodeSpec& spec, const ConvParams& conv) : spec_(spec), c_(conv) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    handle_ = ctx.cudnn;
    x_ptr_ = in[0].data;
    w_ptr_ = in[1].data;
    b_ptr_ = c_.has_bias ? in[2].data : nullptr;
    y_ptr_ = out[0].data;
    dtype_ = out[0].spec.dtype;
    const bool half = dtype_ != 1;
    const bool odd_channels = half && (c_.in_channels / c_.groups) % 8 != 0;
    if (ctx.autotune || (odd_channels && c_.groups == 1)) {
      choose_by_timing(ctx);
      return;
    }
    configure(half && ctx.channels_last_half ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW);
    // The fused call runs only IMPLICIT_PRECOMP_GEMM, which is slow for grouped and depthwise
    // convolutions (10-20x on MobileNetV2): those take the fastest algorithm and a bias add.
    if (b_ptr_ && c_.groups == 1 && try_fused_bias(ctx)) return;
    // Grouped convolutions are always timed (as cudnn.benchmark does): the heuristic's first pick
    // for depthwise shapes is often a slow direct kernel.
    choose_algorithm(ctx, c_.groups > 1);
  }

  void launch(cudaStream_t stream) override {
    MC_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    const float one = 1.f, zero = 0.f;
    if (fused_) {
      MC_CUDNN_CHECK(cudnnConvolutionBiasActivationForward(handle_, &one, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, algo_,
                                                           workspace_.data(), workspace_bytes_, &zero, d_.y, y_ptr_, d_.b,
                                                           b_ptr_, d_.act, d_.y, y_ptr_));
      return;
    }
    MC_CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, algo_, workspace_.data(),
                                           workspace_bytes_, &zero, d_.y, y_ptr_));
    if (b_ptr_) MC_CUDNN_CHECK(cudnnAddTensor(handle_, &one, d_.b, b_ptr_, &one, d_.y, y_ptr_));
  }

  std::string implementation() const override {
    return std::string("cudnn conv ") + (fused_ ? "+bias " : "") + (channels_last_ ? "NHWC" : "NCHW") + " algo " +
           std::to_string(static_cast<int>(algo_)) +
           (timed_ ? " (timed choice of " + candidates_ + ")" : fused_ ? " (fused bias)" : tuned_ ? " (autotuned)" : " (heuristic)");
  }

 private:
  // (Re)creates the descriptors for one layout; a previous choice of algorithm is dropped.
  void configure(cudnnTensorFormat_t format) {
    fused_ = tuned_ = false;
    channels_last_ = format == CUDNN_TENSOR_NHWC;
    d_.configure(c_, format, dtype_, b_ptr_ != nullptr);
  }

  // The fastest of: each allowed layout, fused conv+bias (where cuDNN runs it) or cudnnFind's
  // fastest algorithm (+ bias add), timed as launch() runs them.
  void choose_by_timing(CudaContext& ctx) {
    struct Choice {
      cudnnTensorFormat_t format;
      bool fused;
      cudnnConvolutionFwdAlgo_t algo;
      cudnnMathType_t math;
      size_t workspace;
    };
    std::vector<cudnnTensorFormat_t> formats = {CUDNN_TENSOR_NCHW};
    if (dtype_ != 1 && ctx.channels_last_half) formats.insert(formats.begin(), CUDNN_TENSOR_NHWC);
    Choice best{};
    double best_us = std::numeric_limits<double>::infinity();
    auto consider = [&](bool fused) {
      const double us = quick_median_us([this](cudaStream_t s) { launch(s); }, ctx.stream, memo_key(fused));
      candidates_ += fmt::format("{}{} {} {:.1f} us", candidates_.empty() ? "" : ", ", channels_last_ ? "NHWC" : "NCHW",
                                 fused ? "fused" : "algo " + std::to_string(static_cast<int>(algo_)), us);
      if (us < best_us) {
        best_us = us;
        best = {channels_last_ ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, fused, algo_, math_, workspace_bytes_};
      }
    };
    for (cudnnTensorFormat_t format : formats) {
      configure(format);
      if (b_ptr_ && c_.groups == 1 && try_fused_bias(ctx)) consider(true);
      fused_ = false;  // the same descriptors, now for conv + bias add
      if (choose_algorithm(ctx, true, /*throw_if_none=*/false)) consider(false);
    }
    if (!std::isfinite(best_us)) throw Error(kExitRuntime, "cuDNN offers no convolution algorithm for this shape");
    configure(best.format);
    if (best.fused) {
      if (!try_fused_bias(ctx)) throw Error(kExitRuntime, "cuDNN refused the fused convolution it ran before");
    } else {
      algo_ = best.algo;
      math_ = best.math;
      MC_CUDNN_CHECK(cudnnSetConvolutionMathType(d_.conv, math_));
      workspace_bytes_ = best.workspace;
      workspace_.resize(workspace_bytes_);
    }
    timed_ = true;
  }

  // Conv + bias in one call; false (nothing kept) where cuDNN does not run this configuration.
  bool try_fused_bias(CudaContext& ctx) {
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(handle_, d_.x, d_.w, d_.conv, d_.y, algo, &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > ctx.max_workspace_bytes)
      return false;
    MC_CUDNN_CHECK(cudnnCreateActivationDescriptor(&d_.act));
    MC_CUDNN_CHECK(cudnnSetActivationDescriptor(d_.act, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    DeviceBuffer workspace(bytes > 0 ? bytes : 0);
    MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
    const float one = 1.f, zero = 0.f;
    const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
        handle_, &one, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, algo, workspace.data(), bytes, &zero, d_.y, y_ptr_, d_.b, b_ptr_, d_.act,
        d_.y, y_ptr_);
    if (status != CUDNN_STATUS_SUCCESS) {
      cudaGetLastError();  // a refused configuration leaves no launch error behind
      return false;
    }
    MC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    algo_ = algo;
    workspace_bytes_ = bytes;
    workspace_ = std::move(workspace);
    fused_ = true;
    return true;
  }

  // cuDNN's first usable algorithm in the heuristic's order; with `find`, cudnnFind's usable
  // candidates (up to 4, in its order) re-timed as a measurement times, the fastest kept:
  // cudnnFind's own single-run times are noisy enough to pick a 3-8x slower depthwise kernel
  // in one run of three.
  bool choose_algorithm(CudaContext& ctx, bool find, bool throw_if_none = true) {
    int count = 0;
    MC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
    int returned = 0;
    if (find) {
      perf = find_algorithms(ctx, count);
      returned = static_cast<int>(perf.size());
      tuned_ = true;
    } else {
      MC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, d_.x, d_.w, d_.conv, d_.y, count, &returned, perf.data()));
    }
    std::vector<cudnnConvolutionFwdAlgoPerf_t> usable;
    for (int i = 0; i < returned; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ctx.max_workspace_bytes) usable.push_back(perf[i]);
    if (usable.empty()) {
      if (throw_if_none) throw Error(kExitRuntime, "cuDNN offers no convolution algorithm for this shape");
      return false;
    }
    if (!find || usable.size() == 1) {
      use(usable[0]);
      return true;
    }
    if (usable.size() > 4) usable.resize(4);
    size_t best = 0;
    double best_us = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < usable.size(); ++i) {
      use(usable[i]);
      const double us = quick_median_us([this](cudaStream_t s) { launch(s); }, ctx.stream, memo_key(false));
      if (us < best_us) {
        best_us = us;
        best = i;
      }
    }
    use(usable[best]);
    return true;
  }

  // cudnnFind's list for this node's work and layout, once per process (its order is by its own
  // timing; the candidates are re-timed by the caller).
  std::vector<cudnnConvolutionFwdAlgoPerf_t> find_algorithms(CudaContext& ctx, int count) {
    static std::map<std::string, std::vector<cudnnConvolutionFwdAlgoPerf_t>> found;
    const std::string key = memo_key(false).substr(0, memo_key(false).rfind('|'));
    if (auto it = found.find(key); it != found.end()) return it->second;
    LedgerScope finding("timed choices: cudnnFind");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
    int returned = 0;
    DeviceBuffer scratch(ctx.max_workspace_bytes);
    MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
    MC_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle_, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, d_.y, y_ptr_, count,
                                                          &returned, perf.data(), scratch.data(), scratch.bytes()));
    perf.resize(returned);
    return found[key] = perf;
  }

  // What a timed candidate is in quick_median_us's memo: this node's work, layout, and the fused
  // call or the algorithm and math type (+ bias add) as launch() runs them.
  std::string memo_key(bool fused) const {
    return "cudnn conv|" + measurement_key(spec_) + (channels_last_ ? "|NHWC|" : "|NCHW|") +
           (fused ? "fused" : fmt::format("algo {} math {}", static_cast<int>(algo_), static_cast<int>(math_)));
  }

  // Runs `perf`'s algorithm with the math type it was found or proposed with (cuDNN rejects it
  // with BAD_PARAM under another).
  void use(const cudnnConvolutionFwdAlgoPerf_t& perf) {
    algo_ = perf.algo;
    math_ = perf.mathType;
    MC_CUDNN_CHECK(cudnnSetConvolutionMathType(d_.conv, math_));
    workspace_bytes_ = perf.memory;
    workspace_.resize(workspace_bytes_ > 0 ? workspace_bytes_ : 0);
  }

  NodeSpec spec_;
  ConvParams c_;
  cudnnHandle_t handle_ = nullptr;
  ConvDescriptors d_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
  DeviceBuffer workspace_;
  void *x_ptr_ = nullptr, *w_ptr_ = nullptr, *b_ptr_ = nullptr, *y_ptr_ = nullptr;
  bool channels_last_ = false, tuned_ = false, fused_ = false, timed_ = false;
  int32_t dtype_ = 1;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  std::string candidates_;  // the timed choice's candidates and their times
};

}  // namespace

std::unique_ptr<OperatorRunner> make_cudnn_conv_runner(const NodeSpec& spec, const ConvParams& c, std::string* reason) {
  const size_t n = c.kernel.size();
  for (size_t i = 0; i < n; ++i)
    if (c.pads[i] != c.pads[i + n]) {
      *reason = "Conv with asymmetric pads (cuDNN pads both sides equally)";
      return nullptr;
    }
  const int32_t dtype = spec.outputs[0].dtype;
  if (dtype != 1 && dtype != 10 && dtype != 16) {
    *reason = std::string("Conv in ") + dtype_name(dtype);
    return nullptr;
  }
  return std::make_unique<CudnnConvRunner>(spec, c);
}

}  // namespace modelcost::cuda
