// An operator runner enqueues one node's GPU work on buffers it is bound to. Strategy classes:
// cuDNN convolution and pooling, cuBLASLt matrix products, and the project's own kernels for
// the rest. prepare() does every allocation and algorithm choice, so launch() only enqueues
// kernels and can be captured into a CUDA graph.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "core/dtype_gate.h"
#include "core/kernels.h"
#include "measure/op_plan.h"

namespace modelcost::cuda {

class Timing;

struct DeviceTensor {
  void* data = nullptr;
  TensorSpec spec;  // present == false for an omitted optional tensor
  size_t bytes() const { return static_cast<size_t>(spec.elements() * dtype_size(spec.dtype)); }
};

// Library handles and choices shared by the runners of one backend.
struct CudaContext {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  bool autotune = false;
  // Convolution and pooling in fp16/bf16 run channels-last (NHWC), as deployments do; tests that
  // compare values against the NCHW reference turn this off.
  bool channels_last_half = true;
  size_t max_workspace_bytes = size_t(256) << 20;
  // A candidate timed once may use this much workspace where the runner keeps only the chosen
  // candidate's (a large image's stem conv pads its input in cuDNN's workspace).
  size_t max_timed_workspace_bytes = size_t(1) << 30;
  int multiprocessors = 0;  // the device's SM count, for kernels that size their grids by it (0: unknown)
  // The --dtype option the nodes were read with: an If's branch reads its nodes the same way.
  std::string dtype_option;
  // The owner's timing state (timing/timing.h), which timed choices in prepare() use; set by
  // whoever makes the context (the backend), and outliving it.
  Timing* timing = nullptr;
  // Choices made for identical work (timed choices between runners and algorithms, cuDNN graphs
  // with their compiled plans), by a key naming the work and the layout: an identical node or
  // group takes the earlier choice instead of timing (and compiling) it again. Cleared with the
  // handles the choices were made with (the context's owner outlives them).
  std::map<std::string, std::shared_ptr<void>> choices;
  template <class T>
  std::shared_ptr<T> choice(const std::string& key) const {
    auto it = choices.find(key);
    return it == choices.end() ? nullptr : std::static_pointer_cast<T>(it->second);
  }
};

class OperatorRunner {
 public:
  virtual ~OperatorRunner() = default;
  virtual void prepare(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs,
                       CudaContext& context) = 0;
  virtual void launch(cudaStream_t stream) = 0;
  // "cudnn conv NHWC fp16 algo 1", "cublasLt fp16", "kernel softmax", ...
  virtual std::string implementation() const = 0;
};

// The runner for a plan, or nullptr with *reason set when no strategy applies.
std::unique_ptr<OperatorRunner> make_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason);

// Strategy factories (one file each).
// make_kernel_runner takes every kind the project's own kernels run (kernel_runners.cpp).
std::unique_ptr<OperatorRunner> make_kernel_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason);
std::unique_ptr<OperatorRunner> make_cudnn_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason);
std::unique_ptr<OperatorRunner> make_cudnn_pool_runner(const NodeSpec& spec, const PoolParams& pool, std::string* reason);
std::unique_ptr<OperatorRunner> make_cublaslt_matmul_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason);
// A product with K and N at most 32 as a stream of its rows (gemm/thin_product.h).
std::unique_ptr<OperatorRunner> make_thin_product_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason);
// A product of 1-32 rows over fp16 weights stored [N, K] as a stream of the weights (gemm/skinny_gemm.h).
std::unique_ptr<OperatorRunner> make_skinny_product_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason);
// A 2-D conv as one cuDNN graph, the one node_conv_graph names (conv_graph_kernel.cpp): a
// depthwise conv's graph is the conv alone, one vectorised pass adding its bias after it; any
// other conv's holds its bias. Channels-last fp16/bf16, refused at prepare() otherwise.
std::unique_ptr<OperatorRunner> make_conv_graph_runner(const ConvParams& conv, std::string* why);
// A grouped conv of 2-64 groups as a dense cuDNN conv over block-diagonal filters
// (block_diagonal_conv_runner.cpp).
std::unique_ptr<OperatorRunner> make_block_diagonal_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* why);
std::unique_ptr<OperatorRunner> make_patch_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason);
// `epilogue` (kernels.h) runs in the kernel's store: a deployed epilogue. Its scale, shift and
// residual must outlive the runner.
std::unique_ptr<OperatorRunner> make_depthwise_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason,
                                                           const DepthwiseEpilogue& epilogue = {});
std::unique_ptr<OperatorRunner> make_topk_runner(const NodeSpec& spec, const TopKPlan& plan, std::string* reason);
std::unique_ptr<OperatorRunner> make_contraction_runner(const NodeSpec& spec, const ContractionPlan& plan, std::string* reason);
std::unique_ptr<OperatorRunner> make_conv_transpose_runner(const NodeSpec& spec, const ConvTransposePlan& plan, std::string* reason);
std::unique_ptr<OperatorRunner> make_recurrent_runner(const NodeSpec& spec, const RecurrentPlan& plan, std::string* reason);
// QuantizePlan, DynamicQuantizePlan, IntegerMatMulPlan and QLinearConvPlan.
std::unique_ptr<OperatorRunner> make_quantized_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason);
// The detection kinds at the analyzer's output sizes (nonzero_runner.cu, nms_runner.cu).
std::unique_ptr<OperatorRunner> make_nonzero_runner(const NodeSpec& spec, const NonZeroPlan& plan, std::string* reason);
std::unique_ptr<OperatorRunner> make_nms_runner(const NodeSpec& spec, const NmsPlan& plan, std::string* reason);
// If: the plan's branch, its nodes run by their own runners (branch_runner.cpp). outer: device
// pointers of the enclosing graph's tensors by id, which the branch reads; nullptr: the branch
// allocates and fills its own copies of them.
std::unique_ptr<OperatorRunner> make_branch_runner(const NodeSpec& spec, const BranchPlan& plan,
                                                   const std::vector<void*>* outer, std::string* reason);
// Prepares every candidate, times each and runs the fastest (at least one candidate); a candidate
// whose prepare() throws (it does not run this configuration) is left out unless none is left.
// `key` (measurement_key of the node) names identical work: the choice is made once per context.
std::unique_ptr<OperatorRunner> make_fastest_runner(std::vector<std::unique_ptr<OperatorRunner>> candidates,
                                                    const std::string& key = "");
// groups == in channels, out channels a multiple of them (a channel multiplier), 2 spatial dims.
bool is_depthwise_2d(const ConvParams& conv);
// Kernel <= stride, no padding or dilation, one group: the conv is a GEMM over gathered patches.
bool is_gather_conv(const ConvParams& conv);
// A gather conv whose kernel equals its stride: its patches tile the input.
bool is_patch_conv(const ConvParams& conv);
// A gather conv over channels tensor cores cannot take as they are, other than a 1x1: cuDNN has
// no fast kernel for it, so it runs as gather + GEMM alone (patch_conv_runner.cpp).
bool needs_gather_gemm(const ConvParams& conv);
// 1x1 kernel, stride 1, no padding, one group: channels-last, the conv is one GEMM
// (conv_gemm_runner.cpp), [N*H*W, C] x [OC, C]^T with the bias as a [OC] row.
bool is_pointwise_gemm_conv(const ConvParams& conv);
MatMulParams conv_gemm_params(const ConvParams& conv);
std::unique_ptr<OperatorRunner> make_conv_gemm_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason);

}  // namespace modelcost::cuda
