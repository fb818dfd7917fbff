// Convolution through cuDNN's convolution API: channels-last for fp16/bf16 (tensor cores, as
// deployments run it), NCHW for fp32 (TF32 allowed as PyTorch's default allows it for cuDNN).
// A dense Conv node with a bias takes a timed choice, as cudnn.benchmark and TensorRT choose:
// one call, cudnnConvolutionBiasActivationForward with the identity activation (which cuDNN runs
// only with IMPLICIT_PRECOMP_GEMM), against other algorithms followed by a bias add
// (cudnnAddTensor), each run as launch() runs it and timed like a measurement (CUPTI kernel
// durations), the fastest kept. Those other algorithms are cuDNN's heuristic's first four usable
// ones, not cudnnFind's: cudnnFind runs every algorithm, the slow ones (FFT,
// Winograd on large dilated convs) tens of milliseconds each, and took a quarter of DeepLabV3's
// --measure wall time at batch 32. With --autotune every conv, and fp16/bf16 convs whose input
// channels are not a multiple of 8 (tensor cores take 8 halves at a time; for a 3-channel image
// stem the heuristic's channels-last pick can be several times off; patch convs over such images
// go to patch_conv_runner.cpp instead), take that choice in both layouts (NHWC, NCHW) among
// cudnnFind's algorithms. Grouped convs time cudnnFind's algorithms; other convs without a bias
// run the heuristic's algorithm.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "conv/conv_descriptors.h"
#include "core/cudnn_util.h"
#include "core/runner.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

class CudnnConvRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

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
    const cudnnTensorFormat_t preferred = half && ctx.channels_last_half ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    if (ctx.autotune || (odd_channels && c_.groups == 1)) {
      choose_by_timing(ctx, preferred, /*both_layouts=*/true);
      return;
    }
    // A dense conv with a bias: the fused call (IMPLICIT_PRECOMP_GEMM only) timed against
    // cudnnFind's algorithms + a bias add, in the deployed layout, as cudnn.benchmark chooses.
    if (b_ptr_ && c_.groups == 1) {
      choose_by_timing(ctx, preferred, /*both_layouts=*/false);
      return;
    }
    configure(preferred);
    // Grouped convolutions are always timed (as cudnn.benchmark does): the heuristic's first pick
    // for depthwise shapes is often a slow direct kernel. (The fused call is slow for them,
    // 10-20x on MobileNetV2, so they take the fastest algorithm and a bias add.)
    choose_algorithm(ctx, c_.groups > 1 ? Search::kFind : Search::kHeuristicFirst);
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

  // The fastest of: the preferred layout (and NCHW too where `both_layouts`), fused conv+bias
  // (where cuDNN runs it) or cudnnFind's fastest algorithm (+ bias add), timed as launch() runs them.
  // The timed choice's outcome: kept in the context, so an identical conv takes it untimed.
  struct Choice {
    cudnnTensorFormat_t format = CUDNN_TENSOR_NHWC;
    bool fused = false;
    cudnnConvolutionFwdAlgo_t algo{};
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspace = 0;
    std::string candidates;  // every candidate's time
  };

  void choose_by_timing(CudaContext& ctx, cudnnTensorFormat_t preferred, bool both_layouts) {
    const std::string key = "cudnn conv|" + measurement_key(spec_) + "|" + std::to_string(static_cast<int>(preferred)) +
                            (both_layouts ? "|both" : "");
    std::shared_ptr<Choice> best = ctx.choice<Choice>(key);
    if (!best) {
      best = std::make_shared<Choice>(time_candidates(ctx, preferred, both_layouts));
      ctx.choices[key] = best;
    }
    candidates_ = best->candidates;
    configure(best->format);
    if (best->fused) {
      if (!try_fused_bias(ctx)) throw Error(kExitRuntime, "cuDNN refused the fused convolution it ran before");
    } else {
      algo_ = best->algo;
      math_ = best->math;
      MC_CUDNN_CHECK(cudnnSetConvolutionMathType(d_.conv, math_));
      workspace_bytes_ = best->workspace;
      workspace_.resize(workspace_bytes_);
    }
    timed_ = true;
  }

  Choice time_candidates(CudaContext& ctx, cudnnTensorFormat_t preferred, bool both_layouts) {
    std::vector<cudnnTensorFormat_t> formats = {preferred};
    if (both_layouts && preferred == CUDNN_TENSOR_NHWC) formats.push_back(CUDNN_TENSOR_NCHW);
    Choice best;
    std::string candidates;
    double best_us = std::numeric_limits<double>::infinity();
    auto consider = [&](bool fused) {
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream, {{}, best_us});
      candidates += fmt::format("{}{} {} {:.1f} us", candidates.empty() ? "" : ", ", channels_last_ ? "NHWC" : "NCHW",
                                fused ? "fused" : "algo " + std::to_string(static_cast<int>(algo_)), us);
      if (us < best_us) {
        best_us = us;
        best = {channels_last_ ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, fused, algo_, math_, workspace_bytes_, ""};
      }
    };
    const Search search = both_layouts ? Search::kFind : Search::kHeuristicTimed;
    for (cudnnTensorFormat_t format : formats) {
      configure(format);
      if (b_ptr_ && c_.groups == 1 && try_fused_bias(ctx)) consider(true);
      fused_ = false;  // the same descriptors, now for conv + bias add
      if (choose_algorithm(ctx, search, /*throw_if_none=*/false)) consider(false);
    }
    if (!std::isfinite(best_us)) throw Error(kExitRuntime, "cuDNN offers no convolution algorithm for this shape");
    best.candidates = candidates;
    return best;
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

  // How the algorithm is chosen: the heuristic's first usable one, or up to kTimedCandidates of the
  // heuristic's or of cudnnFind's usable candidates (in their order) re-timed as a measurement
  // times, the fastest kept: cudnnFind's own single-run times are noisy enough to pick a 3-8x
  // slower depthwise kernel in one run of three.
  enum class Search { kHeuristicFirst, kHeuristicTimed, kFind };
  static constexpr size_t kTimedCandidates = 4;

  bool choose_algorithm(CudaContext& ctx, Search search, bool throw_if_none = true) {
    const bool find = search == Search::kFind;
    int count = 0;
    MC_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
    int returned = 0;
    if (find) {
      LedgerScope finding(ctx.timing->ledger, "timed choices: cudnnFind");
      DeviceBuffer scratch(ctx.max_workspace_bytes);
      MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
      MC_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle_, d_.x, x_ptr_, d_.w, w_ptr_, d_.conv, d_.y, y_ptr_, count,
                                                            &returned, perf.data(), scratch.data(), scratch.bytes()));
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
    if (search == Search::kHeuristicFirst || usable.size() == 1) {
      use(usable[0]);
      return true;
    }
    if (usable.size() > kTimedCandidates) usable.resize(kTimedCandidates);
    size_t best = 0;
    double best_us = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < usable.size(); ++i) {
      use(usable[i]);
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream, {{}, best_us});
      if (us < best_us) {
        best_us = us;
        best = i;
      }
    }
    use(usable[best]);
    return true;
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
  if (!accepts_dtype(CudnnConvRunner::kDtypes, dtype, "Conv in ", reason)) return nullptr;
  return std::make_unique<CudnnConvRunner>(spec, c);
}

}  // namespace modelcost::cuda
