#include "measure/cuda/group_check.h"

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/group_runner.h"
#include "measure/cuda/tensor_transfer.h"

namespace modelcost::cuda {

GroupRun run_group_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                          const std::string& dtype) {
  CudaContext ctx;
  MC_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  cudnnCreate(&ctx.cudnn);
  cublasLtCreate(&ctx.lt);
  ctx.channels_last_half = false;
  GroupRun run;
  {
    ModelBuffers buffers(analysis, dtype, ctx.stream);
    for (const auto& [id, tensor] : inputs) {
      HostTensor t = tensor;
      t.dtype = measurement_dtype(t.dtype, dtype);
      upload(t, buffers.data(id), ctx.stream);
    }
    const GroupView view(analysis, group, buffers, ctx);
    GroupKernelChoice choice = make_group_kernel(view);
    run.fused = choice.fused;
    if (choice.kernel) {
      run.runner = choice.kernel->implementation();
      choice.kernel->launch(ctx.stream);
    }
    MC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    for (int id : group.outputs)
      for (size_t m : group.members)
        for (size_t o = 0; o < analysis.nodes[m].node->outputs.size(); ++o)
          if (analysis.nodes[m].node->outputs[o] == id)
            run.outputs[id] = download(buffers.data(id), buffers.planned(m).spec.outputs[o], ctx.stream);
  }
  cublasLtDestroy(ctx.lt);
  cudnnDestroy(ctx.cudnn);
  cudaStreamDestroy(ctx.stream);
  return run;
}

}  // namespace modelcost::cuda
