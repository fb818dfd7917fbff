// A conv group's work (conv, bias, residual adds, activation) as one cuDNN operation graph and
// its finalized execution plans, built apart from any buffers: finalizing a runtime-fusion plan
// compiles its kernel, so a model's graphs are built together on threads before its groups are
// prepared one by one (prebuild_conv_graphs), and an identical group reuses what was built.
#pragma once
#include <cudnn.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conv/cudnn_graph.h"
#include "deployed/group_runner.h"

namespace modelcost::cuda {

// The graph's tensor ids, bound to buffers by the kernel's variant pack.
enum ConvGraphUid : int64_t {
  kGraphX = 1, kGraphW, kGraphBias, kGraphResidual, kGraphY, kGraphConvOut, kGraphBiasOut, kGraphResidualOut,
  kGraphSecondResidual, kGraphSecondResidualOut
};

// The descriptors and finalized plans of one graph, kept in a CudaContext's choices by graph_key.
// `timed`: a kernel has timed the plans and `chosen` is the fastest; `refused`: no plan runs.
struct ConvGraphPlans {
  std::vector<Descriptor> keep;  // every descriptor the graph and its plans refer to
  std::vector<GraphPlan> plans;
  size_t chosen = 0;
  bool timed = false;
  std::string note, refused;
};

// The wall ledger's phase of building graphs, on demand or together.
inline constexpr const char* kGraphBuildPhase = "cuDNN graph: plans built (runtime-fusion kernels compiled)";

// A graph no plan runs, kept under its key so an identical group does not build it again.
std::shared_ptr<ConvGraphPlans> refused_graph(std::string reason);

// Names the graph: the conv's shapes and attributes, dtype, epilogue.
std::string graph_key(const ConvParams& c, int32_t dtype, const MatrixEpilogue& e);

// The graph of conv `c` in `dtype` (fp16/bf16, channels-last) with epilogue `e` and the
// heuristics' first plans that finalize. Throws GraphRefused where cuDNN offers none.
std::shared_ptr<ConvGraphPlans> build_conv_graph_plans(cudnnHandle_t handle, const ConvParams& c, int32_t dtype,
                                                       const MatrixEpilogue& e);

// The graph's kernel on the given buffers (x, w, the bias where `conv` has one, y, then e's
// residuals), its plan timed where no identical graph has been (a node's own graph; calibrate's
// grid times a conv with the epilogue a network fuses into it so). nullptr with *why where no
// plan runs, the refusal kept so an identical graph is not built again.
std::unique_ptr<GroupKernel> make_conv_graph_kernel_on(const ConvParams& conv, int32_t dtype, const MatrixEpilogue& e,
                                                    std::vector<void*> operands, CudaContext& ctx, std::string* why);

struct ConvGraphRequest {
  ConvParams conv;
  int32_t dtype = 0;
  MatrixEpilogue epilogue;
};

// The graph a group's kernel will try (conv_graph_epilogue) where cuDNN's graph runs it, or nothing.
std::optional<ConvGraphRequest> conv_graph_request(const GroupView& view);

// The graph a node's conv runs as alone (make_conv_graph_runner): a depthwise conv's is the conv
// without its bias (cuDNN's specialised depthwise kernels are conv-only engines; a pass after it
// adds the bias), any other conv's holds its bias.
ConvGraphRequest node_conv_graph(const ConvParams& conv, int32_t dtype);
// That graph for a node whose timed choice has a graph candidate (a depthwise or grouped 2-D conv,
// channels-last fp16/bf16), or nothing: a model's node graphs are built together first.
std::optional<ConvGraphRequest> node_conv_graph_request(const NodeSpec& spec, const OpPlan& plan, const CudaContext& cuda);

// Builds the graphs of `requests` that cuda.choices lacks, several at once, into cuda.choices
// (a refused graph as refused, with cuDNN's reason).
void prebuild_conv_graphs(const std::vector<ConvGraphRequest>& requests, CudaContext& cuda);

}  // namespace modelcost::cuda
