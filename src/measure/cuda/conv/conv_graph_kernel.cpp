// A dense conv with its epilogue as one cuDNN graph, the way a runtime (TensorRT, cuDNN's
// frontend) fuses what the legacy fused call cannot take: conv -> + bias -> (+ residual) ->
// activation, the activation SiLU (cuDNN's SWISH), ReLU6 (RELU with an upper clip), ReLU or
// Sigmoid, the intermediates virtual (fp32, never stored). cuDNN's heuristics offer plans
// (runtime-fusion engines generate one kernel for the whole graph); the first few that finalize
// are timed as measurements time and the fastest kept. Channels-last (NHWC) fp16/bf16, 2-D. A
// grouped conv's graph too, in a group and as a node: its engines hold grouped kernels that
// cudnnFind's algorithms lack.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "conv/cudnn_graph.h"
#include "core/cuda_check.h"
#include "core/cudnn_util.h"
#include "deployed/group_runner.h"
#include "timing/sampler.h"

namespace modelcost::cuda {

std::string graph_key(const ConvParams& c, int32_t dtype, const MatrixEpilogue& e);

namespace {

enum Uid : int64_t { kX = 1, kW, kBias, kResidual, kY, kConvOut, kBiasOut, kResidualOut, kSecondResidual, kSecondResidualOut };
// The heuristics' first plans timed: each runtime-fusion plan compiles a kernel when finalized,
// and the first two held the fastest in EfficientNet-B0 and MobileNetV2 on the H100.
constexpr size_t kPlansTimed = 2;

const char* activation_name(EpilogueActivation a) {
  switch (a) {
    case EpilogueActivation::kRelu: return "+relu";
    case EpilogueActivation::kClippedRelu: return "+relu6";
    case EpilogueActivation::kSwish: return "+silu";
    case EpilogueActivation::kSigmoid: return "+sigmoid";
    default: return "";
  }
}

// A graph's descriptors and finalized plans with the plan chosen: kept in the context, so an
// identical group reuses the compiled plans untimed (a runtime-fusion plan compiles a kernel
// when finalized). `refused` (no plan runs) is kept too.
struct ConvGraphPlans {
  std::vector<Descriptor> keep;  // every descriptor the graph and its plans refer to
  std::vector<GraphPlan> plans;
  size_t chosen = 0;
  std::string note, refused;
};

class ConvGraphKernel : public GroupKernel {
 public:
  static constexpr auto kDtypes = kHalfDtypes;

  // The group's conv, bias and epilogue on its buffers. Throws GraphRefused where cuDNN runs no
  // plan for this graph.
  ConvGraphKernel(const GroupView& view, const MatrixEpilogue& e, const ConvParams& c, std::shared_ptr<ConvGraphPlans> known)
      : ConvGraphKernel(c, view.spec(e.anchor).outputs[0].dtype, e, group_operands(view, e), view.cuda, std::move(known)) {}

  // `operands`: x, w, bias, y, and the residuals e has.
  ConvGraphKernel(const ConvParams& c, int32_t dtype, const MatrixEpilogue& e, std::vector<void*> operands, CudaContext& ctx,
                  std::shared_ptr<ConvGraphPlans> known)
      : handle_(ctx.cudnn), set_(std::move(known)), pointers_(std::move(operands)) {
    const bool fresh = !set_;
    if (fresh) {
      set_ = std::make_shared<ConvGraphPlans>();
      build(c, cudnn_type(dtype), e);
    }
    uids_ = {kX, kW, kBias, kY};
    if (e.residual >= 0) uids_.push_back(kResidual);
    if (e.second_residual >= 0) uids_.push_back(kSecondResidual);
    label_ = fmt::format("cudnn graph conv+bias{}{}{} NHWC", e.residual >= 0 ? "+add" : "", e.second_residual >= 0 ? "+add" : "",
                         activation_name(e.activation));
    bind(ctx);
    if (fresh) {
      choose_plan(ctx);
    } else if (!runs_and_captures(set_->chosen, ctx.stream)) {
      throw GraphRefused("the plan chosen for an identical group does not run here");
    }
  }

  const std::shared_ptr<ConvGraphPlans>& plans() const { return set_; }

  void launch(cudaStream_t stream) override {
    MC_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    MC_CUDNN_CHECK(cudnnBackendExecute(handle_, set_->plans[set_->chosen].plan->get(), pack_->get()));
  }

  std::string implementation() const override { return label_ + set_->note; }

 private:
  // The operation graph: conv, bias add, residual adds, activation; the last op writes Y.
  void build(const ConvParams& c, cudnnDataType_t type, const MatrixEpilogue& e) {
    const std::vector<int64_t> x_dims = {c.batch, c.in_channels, c.in_size[0], c.in_size[1]},
                               w_dims = {c.out_channels, c.in_channels / c.groups, c.kernel[0], c.kernel[1]},
                               y_dims = {c.batch, c.out_channels, c.out_size[0], c.out_size[1]},
                               b_dims = {1, c.out_channels, 1, 1};
    const std::vector<int64_t> y_strides = layout_strides(y_dims, true);
    const BackendDescriptor& x = keep(graph_tensor(kX, x_dims, layout_strides(x_dims, true), type, false));
    const BackendDescriptor& w = keep(graph_tensor(kW, w_dims, layout_strides(w_dims, true), type, false));
    const BackendDescriptor& b = keep(graph_tensor(kBias, b_dims, layout_strides(b_dims, true), type, false));
    const BackendDescriptor& y = keep(graph_tensor(kY, y_dims, y_strides, type, false));
    const bool act = e.activation != EpilogueActivation::kNone, residual = e.residual >= 0;
    const BackendDescriptor& conv_out = keep(graph_tensor(kConvOut, y_dims, y_strides, CUDNN_DATA_FLOAT, true));
    std::vector<const BackendDescriptor*> ops = {&conv_op(c, x, w, conv_out)};
    const BackendDescriptor* last = &y;
    if (residual || act) last = &keep(graph_tensor(kBiasOut, y_dims, y_strides, CUDNN_DATA_FLOAT, true));
    ops.push_back(&pointwise_op(CUDNN_POINTWISE_ADD, conv_out, &b, *last, 0, set_->keep));
    const std::pair<int, Uid> residuals[] = {{e.residual, kResidual}, {e.second_residual, kSecondResidual}};
    for (const auto& [tensor, uid] : residuals) {
      if (tensor < 0) continue;
      const bool more = act || (uid == kResidual && e.second_residual >= 0);
      const Uid out_uid = uid == kResidual ? kResidualOut : kSecondResidualOut;
      const BackendDescriptor& z = keep(graph_tensor(uid, y_dims, y_strides, type, false));
      const BackendDescriptor* out = more ? &keep(graph_tensor(out_uid, y_dims, y_strides, CUDNN_DATA_FLOAT, true)) : &y;
      ops.push_back(&pointwise_op(CUDNN_POINTWISE_ADD, *last, &z, *out, 0, set_->keep));
      last = out;
    }
    if (act) {
      const cudnnPointwiseMode_t mode = e.activation == EpilogueActivation::kSwish     ? CUDNN_POINTWISE_SWISH_FWD
                                        : e.activation == EpilogueActivation::kSigmoid ? CUDNN_POINTWISE_SIGMOID_FWD
                                                                                       : CUDNN_POINTWISE_RELU_FWD;
      const double clip = e.activation == EpilogueActivation::kClippedRelu ? e.clip : 0;
      ops.push_back(&pointwise_op(mode, *last, nullptr, y, clip, set_->keep));
    }
    set_->plans = graph_plans(handle_, ops, kPlansTimed, set_->keep);
    if (set_->plans.empty()) throw GraphRefused("cuDNN's heuristics offer no plan that runs this graph");
  }

  const BackendDescriptor& conv_op(const ConvParams& c, const BackendDescriptor& x, const BackendDescriptor& w,
                                   const BackendDescriptor& y) {
    auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const int64_t dims = 2;
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const std::vector<int64_t> pre = {c.pads[0], c.pads[1]}, post = {c.pads[2], c.pads[3]};
    desc->set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims, "conv dims");
    desc->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, "conv compute type");
    desc->set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "conv mode");
    desc->set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, pre.data(), "conv pre paddings");
    desc->set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, post.data(), "conv post paddings");
    desc->set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, c.dilations.data(), "conv dilations");
    desc->set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, c.strides.data(), "conv strides");
    desc->finalize("convolution descriptor");
    auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    const float alpha = 1, beta = 0;
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x, "conv x");
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w, "conv w");
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y, "conv y");
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, *desc, "conv descriptor");
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, "conv alpha");
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, "conv beta");
    op->finalize("convolution operation");
    keep(std::move(desc));
    return keep(std::move(op));
  }

  // The workspace the plans need (those within the context's limit) and the variant pack binding
  // this group's buffers.
  void bind(CudaContext& ctx) {
    int64_t workspace = 0;
    for (const GraphPlan& p : set_->plans)
      if (p.workspace <= static_cast<int64_t>(ctx.max_workspace_bytes)) workspace = std::max(workspace, p.workspace);
    workspace_bytes_ = workspace;
    workspace_.resize(static_cast<size_t>(std::max<int64_t>(workspace, 16)));
    pack_ = variant_pack(uids_, pointers_, workspace_.data());
    MC_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
  }

  // Runs each plan once (a plan that fails to execute is dropped), checks that it can be captured
  // into a CUDA graph as the whole-model run needs, times it and keeps the fastest.
  void choose_plan(CudaContext& ctx) {
    double best_us = std::numeric_limits<double>::infinity();
    size_t best = 0;
    std::string times;
    for (size_t i = 0; i < set_->plans.size(); ++i) {
      if (set_->plans[i].workspace > workspace_bytes_ || !runs_and_captures(i, ctx.stream)) continue;
      set_->chosen = i;
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream);
      times += fmt::format("{}engine {} {:.1f} us", times.empty() ? "" : ", ", set_->plans[i].engine, us);
      if (us < best_us) {
        best_us = us;
        best = i;
      }
    }
    if (!(best_us < std::numeric_limits<double>::infinity())) throw GraphRefused("no plan of the graph runs");
    set_->chosen = best;
    set_->note = fmt::format(" engine {} (plans timed: {})", set_->plans[best].engine, times);
  }

  bool runs_and_captures(size_t i, cudaStream_t stream) {
    if (cudnnBackendExecute(handle_, set_->plans[i].plan->get(), pack_->get()) != CUDNN_STATUS_SUCCESS ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    cudaGraph_t graph = nullptr;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return false;
    const cudnnStatus_t status = cudnnBackendExecute(handle_, set_->plans[i].plan->get(), pack_->get());
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return status == CUDNN_STATUS_SUCCESS && end == cudaSuccess;
  }

  static std::vector<void*> group_operands(const GroupView& view, const MatrixEpilogue& e) {
    const Node& node = view.node(e.anchor);
    const int bias_id = node.inputs.size() > 2 && node.inputs[2] >= 0 ? node.inputs[2] : e.bias;
    if (bias_id < 0) throw GraphRefused("no bias");
    std::vector<void*> operands = {view.buffers.data(node.inputs[0]), view.buffers.data(node.inputs[1]),
                                   view.buffers.data(bias_id), view.buffers.data(e.output)};
    if (e.residual >= 0) operands.push_back(view.buffers.data(e.residual));
    if (e.second_residual >= 0) operands.push_back(view.buffers.data(e.second_residual));
    return operands;
  }

  const BackendDescriptor& keep(Descriptor d) {
    set_->keep.push_back(std::move(d));
    return *set_->keep.back();
  }

  cudnnHandle_t handle_;
  std::shared_ptr<ConvGraphPlans> set_;
  std::vector<int64_t> uids_;
  std::vector<void*> pointers_;
  Descriptor pack_;
  DeviceBuffer workspace_;
  int64_t workspace_bytes_ = 0;
  std::string label_;
};

// One conv node with its bias as a cuDNN graph: a candidate beside cudnnFind's algorithms for
// grouped convs, whose graph engines hold kernels the legacy API lacks (a ResNeXt-101 group conv
// at batch 32 ran 2-4x faster on the H100).
class ConvGraphRunner : public OperatorRunner {
 public:
  explicit ConvGraphRunner(const ConvParams& conv) : c_(conv) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const int32_t dtype = out[0].spec.dtype;
    if (!ctx.channels_last_half || !takes_dtype(ConvGraphKernel::kDtypes, dtype))
      throw Error(kExitRuntime, "cuDNN's conv graph runs channels-last fp16/bf16");
    const MatrixEpilogue bias_only;
    const std::string key = graph_key(c_, dtype, bias_only);
    auto known = ctx.choice<ConvGraphPlans>(key);
    if (known && !known->refused.empty()) throw Error(kExitRuntime, known->refused);
    try {
      kernel_ = std::make_unique<ConvGraphKernel>(c_, dtype, bias_only, std::vector<void*>{in[0].data, in[1].data, in[2].data, out[0].data},
                                                  ctx, known);
      ctx.choices[key] = kernel_->plans();
    } catch (const std::exception& error) {  // GraphRefused, or Error from a CUDA call
      cudaGetLastError();
      auto refused = std::make_shared<ConvGraphPlans>();
      refused->refused = std::string("cuDNN graph conv+bias: ") + error.what();
      ctx.choices[key] = refused;
      throw Error(kExitRuntime, refused->refused);
    }
  }

  void launch(cudaStream_t stream) override { kernel_->launch(stream); }
  std::string implementation() const override { return kernel_ ? kernel_->implementation() : "cudnn graph conv+bias NHWC"; }

 private:
  ConvParams c_;
  std::unique_ptr<ConvGraphKernel> kernel_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_conv_graph_runner(const ConvParams& conv, std::string* why) {
  if (!conv.has_bias || conv.kernel.size() != 2 || is_depthwise_2d(conv)) {
    *why = "cuDNN's graph runner takes a 2-D conv with a bias, not depthwise";
    return nullptr;
  }
  return std::make_unique<ConvGraphRunner>(conv);
}

// Names the graph: the conv's shapes and attributes, dtype, epilogue.
std::string graph_key(const ConvParams& c, int32_t dtype, const MatrixEpilogue& e) {
  auto list = [](const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); };
  return fmt::format("cudnn graph|{} {} {} g{} {}|{}|{}|{}|{}|{}|{}|act {} clip {}|res {} {}", c.batch, c.in_channels,
                     c.out_channels, c.groups, dtype, list(c.in_size), list(c.kernel), list(c.strides), list(c.pads),
                     list(c.dilations), c.has_bias, static_cast<int>(e.activation), e.clip, e.residual >= 0,
                     e.second_residual >= 0);
}

std::unique_ptr<GroupKernel> make_conv_graph_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why) {
  const auto& c = std::get<ConvParams>(view.plan(e.anchor));
  const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
  if (is_depthwise_2d(c) || c.kernel.size() != 2 || !view.cuda.channels_last_half || !takes_dtype(ConvGraphKernel::kDtypes, dtype)) {
    *why = "cuDNN's graph fusion runs dense and grouped 2-D convs channels-last in fp16/bf16";
    return nullptr;
  }
  const std::string key = graph_key(c, dtype, e);
  auto known = view.cuda.choice<ConvGraphPlans>(key);
  if (known && !known->refused.empty()) {
    *why = known->refused;
    return nullptr;
  }
  try {
    auto kernel = std::make_unique<ConvGraphKernel>(view, e, c, known);
    view.cuda.choices[key] = kernel->plans();
    return kernel;
  } catch (const std::exception& error) {  // GraphRefused, or Error from a CUDA call
    cudaGetLastError();
    *why = std::string("cuDNN graph conv+epilogue: ") + error.what();
    auto refused = std::make_shared<ConvGraphPlans>();
    refused->refused = *why;
    view.cuda.choices[key] = refused;
    return nullptr;
  }
}

}  // namespace modelcost::cuda
