#include "deployed/group_check.h"

#include "core/cuda_check.h"
#include "core/tensor_transfer.h"
#include "deployed/group_runner.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

// A check's own stream and library handles, released however the check ends.
struct CheckContext {
  Timing timing;  // the check's own: timed choices among a group's candidates
  CudaContext ctx;
  explicit CheckContext(bool channels_last) {
    ctx.timing = &timing;
    MC_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    cudnnCreate(&ctx.cudnn);
    cublasLtCreate(&ctx.lt);
    ctx.channels_last_half = channels_last;
  }
  ~CheckContext() {
    cublasLtDestroy(ctx.lt);
    cudnnDestroy(ctx.cudnn);
    cudaStreamDestroy(ctx.stream);
  }
  CheckContext(const CheckContext&) = delete;
  CheckContext& operator=(const CheckContext&) = delete;
};

void upload_inputs(const std::map<int, HostTensor>& inputs, const std::string& dtype, const ModelBuffers& buffers, cudaStream_t stream) {
  for (const auto& [id, tensor] : inputs) {
    HostTensor t = tensor;
    t.dtype = measurement_dtype(t.dtype, dtype);
    upload(t, buffers.data(id), stream);
  }
}

// Tensor `id` as node `node` of `members` writes it, downloaded.
bool download_output(const Analysis& analysis, const ModelBuffers& buffers, size_t node, int id, cudaStream_t stream,
                     std::map<int, HostTensor>& out) {
  const auto& outputs = analysis.nodes[node].node->outputs;
  for (size_t o = 0; o < outputs.size(); ++o)
    if (outputs[o] == id) {
      out[id] = download(buffers.data(id), buffers.planned(node).spec.outputs[o], stream);
      return true;
    }
  return false;
}

}  // namespace

GroupRun run_group_kernel_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                                 const std::string& dtype, bool channels_last, const GroupKernelFactory& make) {
  CheckContext check(channels_last);
  CudaContext& ctx = check.ctx;
  GroupRun run;
  ModelBuffers buffers(analysis, dtype, ctx.stream, {sibling_outputs(group, analysis)});
  upload_inputs(inputs, dtype, buffers, ctx.stream);
  const GroupView view(analysis, group, buffers, ctx);
  std::string why;
  auto kernel = make(view, &why);
  if (!kernel && !why.empty()) throw Error(kExitRuntime, why);
  if (kernel) {
    run.runner = kernel->implementation();
    kernel->launch(ctx.stream);
  }
  MC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  for (int id : group.outputs)
    for (size_t m : group.members)
      if (download_output(analysis, buffers, m, id, ctx.stream, run.outputs)) break;
  return run;
}

GroupRun run_group_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                          const std::string& dtype) {
  bool fused = false;
  GroupRun run = run_group_kernel_on_gpu(analysis, group, inputs, dtype, /*channels_last=*/false,
                                         [&](const GroupView& view, std::string*) {
                                           GroupKernelChoice choice = make_group_kernel(view);
                                           fused = choice.fused;
                                           return std::move(choice.kernel);
                                         });
  run.fused = fused;
  return run;
}

std::map<int, HostTensor> run_plan_on_gpu(const Analysis& analysis, const FusionPlan& plan, const std::map<int, HostTensor>& inputs,
                                          const std::string& dtype) {
  CheckContext check(/*channels_last=*/false);
  CudaContext& ctx = check.ctx;
  ModelBuffers buffers(analysis, dtype, ctx.stream, adjacent_outputs(analysis, plan), held_tensors(analysis, plan));
  upload_inputs(inputs, dtype, buffers, ctx.stream);
  std::vector<std::unique_ptr<GroupKernel>> kernels;
  for (const FusedGroup& group : plan.groups) kernels.push_back(make_group_kernel(GroupView(analysis, group, buffers, ctx)).kernel);
  for (const auto& kernel : kernels)
    if (kernel) kernel->launch(ctx.stream);
  MC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::map<int, HostTensor> outputs;
  for (int id : analysis.graph->outputs)
    for (size_t n = 0; n < analysis.nodes.size(); ++n)
      if (download_output(analysis, buffers, n, id, ctx.stream, outputs)) break;
  return outputs;
}

}  // namespace modelcost::cuda
