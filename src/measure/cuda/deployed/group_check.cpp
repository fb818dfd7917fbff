#include "deployed/group_check.h"

#include "core/cuda_check.h"
#include "core/tensor_transfer.h"
#include "deployed/group_runner.h"
#include "timing/timing.h"

namespace modelcost::cuda {

GroupRun run_group_kernel_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                                 const std::string& dtype, bool channels_last, const GroupKernelFactory& make) {
  Timing timing;  // the run's own: timed choices among the group's candidates
  CudaContext ctx;
  ctx.timing = &timing;
  MC_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  cudnnCreate(&ctx.cudnn);
  cublasLtCreate(&ctx.lt);
  ctx.channels_last_half = channels_last;
  GroupRun run;
  std::string error;
  try {
    ModelBuffers buffers(analysis, dtype, ctx.stream, {sibling_outputs(group, analysis)});
    for (const auto& [id, tensor] : inputs) {
      HostTensor t = tensor;
      t.dtype = measurement_dtype(t.dtype, dtype);
      upload(t, buffers.data(id), ctx.stream);
    }
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
        for (size_t o = 0; o < analysis.nodes[m].node->outputs.size(); ++o)
          if (analysis.nodes[m].node->outputs[o] == id)
            run.outputs[id] = download(buffers.data(id), buffers.planned(m).spec.outputs[o], ctx.stream);
  } catch (const Error& e) {
    error = e.what();
  }
  cublasLtDestroy(ctx.lt);
  cudnnDestroy(ctx.cudnn);
  cudaStreamDestroy(ctx.stream);
  if (!error.empty()) throw Error(kExitRuntime, error);
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

}  // namespace modelcost::cuda
