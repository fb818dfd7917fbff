// A dense conv with its epilogue as one cuDNN graph, the way a runtime (TensorRT, cuDNN's
// frontend) fuses what the legacy fused call cannot take: conv -> + bias -> (+ residual) ->
// activation, the activation SiLU (cuDNN's SWISH), ReLU6 (RELU with an upper clip), ReLU or
// Sigmoid, the intermediates virtual (fp32, never stored). cuDNN's heuristics offer plans
// (runtime-fusion engines generate one kernel for the whole graph); the first few that finalize
// are timed as measurements time and the fastest kept. Channels-last (NHWC) fp16/bf16, 2-D. A
// grouped conv's graph too, in a group and as a node: its engines hold grouped kernels that
// cudnnFind's algorithms lack.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "conv/conv_graph_plans.h"
#include "core/cuda_check.h"
#include "core/cudnn_util.h"
#include "core/kernels.h"
#include "deployed/group_runner.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

const char* activation_name(EpilogueActivation a) {
  switch (a) {
    case EpilogueActivation::kRelu: return "+relu";
    case EpilogueActivation::kClippedRelu: return "+relu6";
    case EpilogueActivation::kSwish: return "+silu";
    case EpilogueActivation::kSigmoid: return "+sigmoid";
    default: return "";
  }
}

// y[rows, C] += bias[C] over an NCHW-shaped output stored channels-last: C is the innermost axis.
ElementwisePlan channels_last_bias_add(const std::vector<int64_t>& nchw) {
  int64_t rows = 1;
  for (size_t d = 0; d < nchw.size(); ++d)
    if (d != 1) rows *= nchw[d];
  const int64_t channels = nchw.size() > 1 ? nchw[1] : 1;
  ElementwisePlan plan;
  plan.op = ElementwiseOp::kAdd;
  plan.dims = {rows, channels};
  plan.input_strides = {{channels, 1}, {0, 1}};
  return plan;
}

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
    if (!set_) {
      LedgerScope building(ctx.timing->ledger, kGraphBuildPhase);
      set_ = build_conv_graph_plans(ctx.cudnn, c, dtype, e);
    }
    uids_ = {kGraphX, kGraphW};
    if (c.has_bias) uids_.push_back(kGraphBias);
    uids_.push_back(kGraphY);
    if (e.residual >= 0) uids_.push_back(kGraphResidual);
    if (e.second_residual >= 0) uids_.push_back(kGraphSecondResidual);
    label_ = fmt::format("cudnn graph conv{}{}{}{} NHWC", c.has_bias ? "+bias" : "", e.residual >= 0 ? "+add" : "",
                         e.second_residual >= 0 ? "+add" : "", activation_name(e.activation));
    bind(ctx);
    if (!set_->timed) {
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
      const double us = quick_median_us(*ctx.timing, [this](cudaStream_t s) { launch(s); }, ctx.stream, {{}, best_us});
      times += fmt::format("{}engine {} {:.1f} us", times.empty() ? "" : ", ", set_->plans[i].engine, us);
      if (us < best_us) {
        best_us = us;
        best = i;
      }
    }
    if (!(best_us < std::numeric_limits<double>::infinity())) throw GraphRefused("no plan of the graph runs");
    set_->chosen = best;
    set_->timed = true;
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

  cudnnHandle_t handle_;
  std::shared_ptr<ConvGraphPlans> set_;
  std::vector<int64_t> uids_;
  std::vector<void*> pointers_;
  Descriptor pack_;
  DeviceBuffer workspace_;
  int64_t workspace_bytes_ = 0;
  std::string label_;
};

// Whether cuDNN's graph runs this conv here: 2-D convs (dense, grouped, depthwise), channels-last, fp16/bf16.
bool graph_runs(const ConvParams& c, int32_t dtype, const CudaContext& cuda) {
  return c.kernel.size() == 2 && cuda.channels_last_half && takes_dtype(ConvGraphKernel::kDtypes, dtype);
}

// One conv node as a cuDNN graph (node_conv_graph): a candidate beside cudnnFind's algorithms
// for grouped and depthwise convs, whose graph engines hold kernels the legacy API lacks (a
// ResNeXt-101 group conv at batch 32 ran 2-4x faster on the H100). A depthwise conv's bias is
// added in place after its conv-only graph by one vectorised pass over the channels-last rows, as
// a runtime runs it (cudnnAddTensor took twice the conv's time for that pass).
class ConvGraphRunner : public OperatorRunner {
 public:
  explicit ConvGraphRunner(const ConvParams& conv) : c_(conv) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const int32_t dtype = out[0].spec.dtype;
    if (!graph_runs(c_, dtype, ctx))
      throw Error(kExitRuntime, "cuDNN's conv graph runs 2-D convs channels-last in fp16/bf16");
    const ConvGraphRequest graph = node_conv_graph(c_, dtype);
    bias_after_ = c_.has_bias && !graph.conv.has_bias;
    std::vector<void*> operands = {in[0].data, in[1].data};
    if (graph.conv.has_bias) operands.push_back(in[2].data);
    operands.push_back(out[0].data);
    std::string why;
    kernel_ = make_conv_graph_kernel_on(graph.conv, dtype, graph.epilogue, std::move(operands), ctx, &why);
    if (!kernel_) throw Error(kExitRuntime, why);
    if (bias_after_) {
      bias_add_ = channels_last_bias_add(out[0].spec.shape);
      type_ = element_type(dtype);
      bias_ = in[2].data;
      y_ = out[0].data;
    }
  }

  void launch(cudaStream_t stream) override {
    kernel_->launch(stream);
    if (bias_after_) launch_binary(type_, bias_add_, y_, bias_, y_, stream);
  }
  std::string implementation() const override {
    return (kernel_ ? kernel_->implementation() : "cudnn graph conv NHWC") + (bias_after_ ? " + bias add" : "");
  }

 private:
  ConvParams c_;
  bool bias_after_ = false;
  std::unique_ptr<GroupKernel> kernel_;
  ElementwisePlan bias_add_;
  ElementType type_ = ElementType::kFloat16;
  void *bias_ = nullptr, *y_ = nullptr;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_conv_graph_runner(const ConvParams& conv, std::string* why) {
  if (conv.kernel.size() != 2) {
    *why = "cuDNN's graph runner takes a 2-D conv";
    return nullptr;
  }
  return std::make_unique<ConvGraphRunner>(conv);
}

ConvGraphRequest node_conv_graph(const ConvParams& conv, int32_t dtype) {
  ConvGraphRequest graph{conv, dtype, MatrixEpilogue{}};  // the node alone: nothing after the conv
  if (is_depthwise_2d(conv)) graph.conv.has_bias = false;
  return graph;
}

namespace {

// The kernel `make(known)` builds for graph `key`, its plans kept in cuda.choices; a graph cuDNN
// refuses is kept as refused (`what` and cuDNN's reason in *why) so an identical group does not
// build it again.
template <typename Make>
std::unique_ptr<GroupKernel> cached_graph_kernel(CudaContext& cuda, const std::string& key, const char* what, std::string* why,
                                                 Make make) {
  auto known = cuda.choice<ConvGraphPlans>(key);
  if (known && !known->refused.empty()) {
    *why = known->refused;
    return nullptr;
  }
  try {
    std::unique_ptr<ConvGraphKernel> kernel = make(known);
    cuda.choices[key] = kernel->plans();
    return kernel;
  } catch (const std::exception& error) {  // GraphRefused, or Error from a CUDA call
    cudaGetLastError();
    *why = std::string(what) + error.what();
    cuda.choices[key] = refused_graph(*why);
    return nullptr;
  }
}

}  // namespace

std::unique_ptr<GroupKernel> make_conv_graph_kernel_on(const ConvParams& conv, int32_t dtype, const MatrixEpilogue& e,
                                                    std::vector<void*> operands, CudaContext& ctx, std::string* why) {
  if (!takes_dtype(ConvGraphKernel::kDtypes, dtype)) {
    *why = "cuDNN's conv graph runs fp16/bf16";
    return nullptr;
  }
  return cached_graph_kernel(ctx, graph_key(conv, dtype, e), "cuDNN graph conv: ", why, [&](auto known) {
    return std::make_unique<ConvGraphKernel>(conv, dtype, e, std::move(operands), ctx, std::move(known));
  });
}

std::unique_ptr<GroupKernel> make_bare_conv_graph_kernel(const GroupView& view, size_t anchor, std::string* why) {
  ConvParams c = std::get<ConvParams>(view.plan(anchor));
  const int32_t dtype = view.spec(anchor).outputs[0].dtype;
  if (!graph_runs(c, dtype, view.cuda)) {
    *why = "cuDNN's graph runs 2-D convs channels-last in fp16/bf16";
    return nullptr;
  }
  c.has_bias = false;
  const Node& node = view.node(anchor);
  return make_conv_graph_kernel_on(c, dtype, MatrixEpilogue{anchor},
                                   {view.buffers.data(node.inputs[0]), view.buffers.data(node.inputs[1]),
                                    view.buffers.data(node.outputs[0])},
                                   view.cuda, why);
}

std::optional<ConvGraphRequest> node_conv_graph_request(const NodeSpec& spec, const OpPlan& plan, const CudaContext& cuda) {
  const auto* c = std::get_if<ConvParams>(&plan);
  if (!c || spec.outputs.empty() || !(is_depthwise_2d(*c) || c->groups > 1) || needs_gather_gemm(*c)) return std::nullopt;
  const int32_t dtype = spec.outputs[0].dtype;
  if (!graph_runs(*c, dtype, cuda)) return std::nullopt;
  return node_conv_graph(*c, dtype);
}

std::optional<ConvGraphRequest> conv_graph_request(const GroupView& view) {
  if (!view.group.launches || view.launching_members().empty()) return std::nullopt;
  const std::optional<MatrixEpilogue> e = conv_graph_epilogue(view);
  if (!e) return std::nullopt;
  const auto& c = std::get<ConvParams>(view.plan(e->anchor));
  const int32_t dtype = view.spec(e->anchor).outputs[0].dtype;
  if (!graph_runs(c, dtype, view.cuda)) return std::nullopt;
  return ConvGraphRequest{c, dtype, *e};
}

std::unique_ptr<GroupKernel> make_conv_graph_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why) {
  const auto& c = std::get<ConvParams>(view.plan(e.anchor));
  const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
  if (!graph_runs(c, dtype, view.cuda)) {
    *why = "cuDNN's graph fusion runs 2-D convs channels-last in fp16/bf16";
    return nullptr;
  }
  if (e.column_scale >= 0) {
    *why = "the conv graph reads the weight as stored: a folded channel scale runs in the fused call";
    return nullptr;
  }
  return cached_graph_kernel(view.cuda, graph_key(c, dtype, e), "cuDNN graph conv+epilogue: ", why, [&](auto known) {
    return std::make_unique<ConvGraphKernel>(view, e, c, std::move(known));
  });
}

}  // namespace modelcost::cuda
