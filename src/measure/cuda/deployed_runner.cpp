// The deployed view on the GPU: every tensor of the model gets a buffer (model_buffers.h), every
// fusion group its kernel (group_runner.h); each group is timed alone like a node, then one pass
// over the groups in order is captured into a CUDA graph and its replays timed with CUDA events,
// as the as-written whole-model run (model_runner.cpp) does for the nodes.
#include "measure/cuda/cuda_backend.h"
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/graph_replay.h"
#include "measure/cuda/group_runner.h"
#include "measure/cuda/sampler.h"
#include "measure/sampling.h"

namespace modelcost::cuda {

DeployedMeasurement CudaBackend::measure_deployed(const Analysis& analysis, const FusionPlan& plan,
                                                  const MeasureOptions& options) {
  DeployedMeasurement result;
  result.whole.method = "CUDA graph replay of the fusion groups in order, CUDA events";
  if (!analysis.graph) {
    result.reason = "no model";
    return result;
  }
  context_.autotune = options.autotune;
  context_.channels_last_half = true;
  try {
    ModelBuffers buffers(analysis, options.dtype, context_.stream);
    std::vector<std::unique_ptr<GroupKernel>> kernels;
    for (const FusedGroup& group : plan.groups) {
      GroupMeasurement g;
      g.group = group.id;
      const GroupView view(analysis, group, buffers, context_);
      GroupKernelChoice choice = make_group_kernel(view);
      g.fused = choice.fused;
      g.fell_back = !choice.fused && choice.kernel;
      g.fallback_reason = choice.fallback_reason;
      g.runner = choice.kernel ? choice.kernel->implementation() : "none (layout only, folded into its neighbours)";
      result.fused_groups += g.fused && choice.kernel;
      result.fallback_groups += g.fell_back;
      result.empty_groups += !choice.kernel;
      kernels.push_back(std::move(choice.kernel));
      result.groups.push_back(std::move(g));
    }
    MC_CUDA_CHECK(cudaStreamSynchronize(context_.stream));
    const SampleConfig config = sample_config(options);
    for (size_t i = 0; i < kernels.size(); ++i) {
      GroupMeasurement& g = result.groups[i];
      if (!kernels[i]) {
        g.timing.measured = true;
        g.timing.zero_cost = true;
        g.timing.implementation = g.runner;
        continue;
      }
      g.timing = sample_launches([&](cudaStream_t s) { kernels[i]->launch(s); }, context_.stream, config,
                                 options.cold ? &l2_flush() : nullptr);
      g.timing.implementation = g.runner;
      if (g.timing.measured) result.sum_of_group_medians_us += g.timing.median_us;
      if (options.progress) options.progress(i + 1, kernels.size(), "group " + std::to_string(g.group));
    }
    const std::string method = result.whole.method;
    GraphReplays replays = time_graph_replays(
        [&](cudaStream_t s) {
          for (auto& k : kernels)
            if (k) k->launch(s);
        },
        context_.stream, options, options.cold ? &l2_flush() : nullptr);
    result.whole = replays.timing;
    result.whole.method = method;
    result.non_kernel_nodes = replays.non_kernel_nodes;
    result.whole.sum_of_node_medians_us = result.sum_of_group_medians_us;
    result.measured = result.whole.measured;
    if (!result.measured) result.reason = result.whole.reason;
  } catch (const Error& e) {
    cudaGetLastError();
    cudaStreamSynchronize(context_.stream);
    result.measured = false;
    result.reason = e.what();
  }
  return result;
}

}  // namespace modelcost::cuda
