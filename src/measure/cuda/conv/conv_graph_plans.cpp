#include "conv/conv_graph_plans.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/cudnn_util.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

// The heuristics' first plans timed: each runtime-fusion plan compiles a kernel when finalized,
// and the first two held the fastest in EfficientNet-B0 and MobileNetV2 on the H100. A conv-only
// graph compiles nothing: more of its engines are timed.
constexpr size_t kFusedPlansTimed = 2, kBarePlansTimed = 4;

// Builds one graph into `set`: its tensors, the conv, bias add, residual adds and activation
// (the last op writes Y; the intermediates virtual, fp32, never stored), then its plans.
class GraphBuilder {
 public:
  GraphBuilder(ConvGraphPlans& set, cudnnHandle_t handle) : set_(set), handle_(handle) {}

  void build(const ConvParams& c, cudnnDataType_t type, const MatrixEpilogue& e) {
    const std::vector<int64_t> x_dims = {c.batch, c.in_channels, c.in_size[0], c.in_size[1]},
                               w_dims = {c.out_channels, c.in_channels / c.groups, c.kernel[0], c.kernel[1]},
                               y_dims = {c.batch, c.out_channels, c.out_size[0], c.out_size[1]},
                               b_dims = {1, c.out_channels, 1, 1};
    const std::vector<int64_t> y_strides = layout_strides(y_dims, true);
    const BackendDescriptor& x = keep(graph_tensor(kGraphX, x_dims, layout_strides(x_dims, true), type, false));
    const BackendDescriptor& w = keep(graph_tensor(kGraphW, w_dims, layout_strides(w_dims, true), type, false));
    const BackendDescriptor& y = keep(graph_tensor(kGraphY, y_dims, y_strides, type, false));
    const bool act = e.activation != EpilogueActivation::kNone, residual = e.residual >= 0;
    // Without a bias, activation or residual the conv writes Y itself (a conv-only graph, whose
    // engines hold cuDNN's specialised depthwise kernels; the bias is then a chain's first step).
    const bool epilogue = c.has_bias || act || residual;
    const BackendDescriptor& conv_out =
        epilogue ? keep(graph_tensor(kGraphConvOut, y_dims, y_strides, CUDNN_DATA_FLOAT, true)) : y;
    std::vector<const BackendDescriptor*> ops = {&conv_op(c, x, w, conv_out)};
    const BackendDescriptor* last = &conv_out;
    if (c.has_bias) {
      const BackendDescriptor& b = keep(graph_tensor(kGraphBias, b_dims, layout_strides(b_dims, true), type, false));
      const BackendDescriptor* out = (residual || act) ? &keep(graph_tensor(kGraphBiasOut, y_dims, y_strides, CUDNN_DATA_FLOAT, true)) : &y;
      ops.push_back(&pointwise_op(CUDNN_POINTWISE_ADD, conv_out, &b, *out, 0, set_.keep));
      last = out;
    }
    const std::pair<int, ConvGraphUid> residuals[] = {{e.residual, kGraphResidual}, {e.second_residual, kGraphSecondResidual}};
    for (const auto& [tensor, uid] : residuals) {
      if (tensor < 0) continue;
      const bool more = act || (uid == kGraphResidual && e.second_residual >= 0);
      const ConvGraphUid out_uid = uid == kGraphResidual ? kGraphResidualOut : kGraphSecondResidualOut;
      const BackendDescriptor& z = keep(graph_tensor(uid, y_dims, y_strides, type, false));
      const BackendDescriptor* out = more ? &keep(graph_tensor(out_uid, y_dims, y_strides, CUDNN_DATA_FLOAT, true)) : &y;
      ops.push_back(&pointwise_op(CUDNN_POINTWISE_ADD, *last, &z, *out, 0, set_.keep));
      last = out;
    }
    if (act) {
      const cudnnPointwiseMode_t mode = e.activation == EpilogueActivation::kSwish     ? CUDNN_POINTWISE_SWISH_FWD
                                        : e.activation == EpilogueActivation::kSigmoid ? CUDNN_POINTWISE_SIGMOID_FWD
                                                                                       : CUDNN_POINTWISE_RELU_FWD;
      const double clip = e.activation == EpilogueActivation::kClippedRelu ? e.clip : 0;
      ops.push_back(&pointwise_op(mode, *last, nullptr, y, clip, set_.keep));
    }
    set_.plans = graph_plans(handle_, ops, epilogue ? kFusedPlansTimed : kBarePlansTimed, set_.keep);
    if (set_.plans.empty()) throw GraphRefused("cuDNN's heuristics offer no plan that runs this graph");
  }

 private:
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

  const BackendDescriptor& keep(Descriptor d) {
    set_.keep.push_back(std::move(d));
    return *set_.keep.back();
  }

  ConvGraphPlans& set_;
  cudnnHandle_t handle_;
};

}  // namespace

std::string graph_key(const ConvParams& c, int32_t dtype, const MatrixEpilogue& e) {
  auto list = [](const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); };
  return fmt::format("cudnn graph|{} {} {} g{} {}|{}|{}|{}|{}|{}|{}|act {} clip {}|res {} {}", c.batch, c.in_channels,
                     c.out_channels, c.groups, dtype, list(c.in_size), list(c.kernel), list(c.strides), list(c.pads),
                     list(c.dilations), c.has_bias, static_cast<int>(e.activation), e.clip, e.residual >= 0,
                     e.second_residual >= 0);
}

std::shared_ptr<ConvGraphPlans> refused_graph(std::string reason) {
  auto refused = std::make_shared<ConvGraphPlans>();
  refused->refused = std::move(reason);
  return refused;
}

std::shared_ptr<ConvGraphPlans> build_conv_graph_plans(cudnnHandle_t handle, const ConvParams& c, int32_t dtype,
                                                       const MatrixEpilogue& e) {
  auto set = std::make_shared<ConvGraphPlans>();
  GraphBuilder(*set, handle).build(c, cudnn_type(dtype), e);
  return set;
}

void prebuild_conv_graphs(const std::vector<ConvGraphRequest>& requests, CudaContext& cuda) {
  std::vector<std::pair<std::string, const ConvGraphRequest*>> todo;
  for (const ConvGraphRequest& r : requests) {
    const std::string key = graph_key(r.conv, r.dtype, r.epilogue);
    if (cuda.choices.count(key) || std::any_of(todo.begin(), todo.end(), [&](const auto& t) { return t.first == key; })) continue;
    todo.emplace_back(key, &r);
  }
  if (todo.empty()) return;
  LedgerScope building(cuda.timing->ledger, kGraphBuildPhase);
  int device = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  std::vector<std::shared_ptr<ConvGraphPlans>> built(todo.size());
  std::atomic<size_t> next{0};
  // Each worker takes the next graph until none is left; cuDNN finalizes plans of one handle on
  // several threads (XLA compiles its cuDNN plans so), each thread on the caller's device.
  auto work = [&] {
    cudaSetDevice(device);
    for (size_t i = next++; i < todo.size(); i = next++) {
      const ConvGraphRequest& r = *todo[i].second;
      try {
        built[i] = build_conv_graph_plans(cuda.cudnn, r.conv, r.dtype, r.epilogue);
      } catch (const std::exception& error) {  // GraphRefused, or Error from a CUDA call
        cudaGetLastError();  // a refused configuration leaves no launch error behind
        built[i] = refused_graph(std::string("cuDNN graph conv+epilogue: ") + error.what());
      }
    }
  };
  const size_t threads = std::min<size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  for (std::thread& worker : workers) worker.join();
  for (size_t i = 0; i < todo.size(); ++i) cuda.choices[todo[i].first] = built[i];
}

// A depthwise network's nodes build a conv-only graph per distinct shape, each finalizing several
// engines: built one at a time they took most of EfficientNet-B3's node pass.
void CudaBackend::prepare_nodes(const Analysis& analysis, const MeasureOptions& options) {
  set_node_context(options);
  std::vector<ConvGraphRequest> requests;
  for (const NodeAnalysis& node : analysis.nodes) {
    if (!node.shaped) continue;
    try {
      const NodeSpec spec = make_node_spec(node, options.dtype);
      if (auto request = node_conv_graph_request(spec, plan_operation(spec), context_)) requests.push_back(*request);
    } catch (const Error&) {
      continue;  // measure_node reports the node's error
    }
  }
  prebuild_conv_graphs(requests, context_);
}

}  // namespace modelcost::cuda
