// The deployed view on the GPU: every tensor of the model gets a buffer (model_buffers.h), every
// fusion group its kernel (group_runner.h); each group is timed alone like a node, then one pass
// over the groups in order is captured into a CUDA graph and its replays timed with CUDA events,
// as the as-written whole-model run (model_runner.cpp) does for the nodes.
#include <map>
#include <optional>

#include "conv/conv_graph_plans.h"
#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "deployed/group_runner.h"
#include "measure/sampling.h"
#include "timing/graph_replay.h"
#include "timing/sampler.h"

namespace modelcost::cuda {

// Every group's kernel, prepared on the model's buffers, with the keys its timing is reused by.
struct PreparedGroups {
  std::vector<std::unique_ptr<GroupKernel>> kernels;  // nullptr: the group runs nothing
  std::vector<std::string> keys;                      // identical groups are timed once
  std::vector<std::string> node_keys;                 // a lone per-node runner's node figure key, or ""
};

namespace {

// The results each batched call of the plan writes side by side (sibling products).
PreparedGroups prepare_groups(const Analysis& analysis, const FusionPlan& plan, ModelBuffers& buffers, CudaContext& cuda,
                              DeployedMeasurement& result) {
  PreparedGroups prepared;
  // The model's cuDNN graphs first, built together: finalizing their plans compiles kernels.
  std::vector<ConvGraphRequest> graphs;
  for (const FusedGroup& group : plan.groups)
    if (auto request = conv_graph_request(GroupView(analysis, group, buffers, cuda))) graphs.push_back(*request);
  prebuild_conv_graphs(graphs, cuda);
  for (const FusedGroup& group : plan.groups) {
    GroupMeasurement g;
    g.group = group.id;
    const GroupView view(analysis, group, buffers, cuda);
    GroupKernelChoice choice = make_group_kernel(view);
    g.fused = choice.fused;
    g.fell_back = !choice.fused && choice.kernel;
    g.fallback_reason = choice.fallback_reason;
    g.runner = choice.kernel ? choice.kernel->implementation() : "none (layout only, folded into its neighbours)";
    prepared.keys.push_back(group_measurement_key(view, g.runner));
    const OperatorRunner* lone = choice.kernel ? choice.kernel->lone_runner() : nullptr;
    const std::vector<size_t> launching = view.launching_members();
    prepared.node_keys.push_back(lone && launching.size() == 1
                                     ? measurement_key(view.spec(launching[0])) + "|" + lone->implementation()
                                     : std::string());
    result.fused_groups += g.fused && choice.kernel;
    result.fallback_groups += g.fell_back;
    result.empty_groups += !choice.kernel;
    prepared.kernels.push_back(std::move(choice.kernel));
    result.groups.push_back(std::move(g));
  }
  MC_CUDA_CHECK(cudaStreamSynchronize(cuda.stream));
  return prepared;
}

}  // namespace

// Each group alone: nothing for a layout-only group, the figure of an identical earlier group,
// the per-node figure where the group is one node run by its per-node runner, else sampled.
void CudaBackend::time_groups(const PreparedGroups& prepared, const MeasureOptions& options, DeployedMeasurement& result) {
  LedgerScope sampling(timing_.ledger, "deployed: group sampling");
  SampleConfig config = sample_config(options);
  config.tally = "groups";
  std::map<std::string, size_t> first_of;
  for (size_t i = 0; i < prepared.kernels.size(); ++i) {
    GroupMeasurement& g = result.groups[i];
    if (!prepared.kernels[i]) {
      g.timing.measured = true;
      g.timing.zero_cost = true;
      g.timing.implementation = g.runner;
      continue;
    }
    const auto [first, inserted] = first_of.emplace(prepared.keys[i], i);
    const auto node = prepared.node_keys[i].empty() ? node_figures_.end() : node_figures_.find(prepared.node_keys[i]);
    if (!inserted) {
      g.timing = result.groups[first->second].timing;
      g.timing.same_as = "group " + std::to_string(result.groups[first->second].group);
      g.timing.implementation = g.runner + " (figure of identical " + g.timing.same_as + ")";
    } else if (node != node_figures_.end() && node->second.measured) {
      g.timing = node->second;
      g.timing.implementation = g.runner + " (figure of the node's own measurement: the same kernel)";
      timing_.ledger.add("groups: node figure reused (count)", 1);
    } else {
      g.timing = sample_launches(timing_, [&](cudaStream_t s) { prepared.kernels[i]->launch(s); }, context_.stream, config,
                                 options.cold ? &l2_flush() : nullptr);
      g.timing.implementation = g.runner;
    }
    if (g.timing.measured) result.sum_of_group_medians_us += g.timing.median_us;
    if (options.progress) options.progress(i + 1, prepared.kernels.size(), "group " + std::to_string(g.group));
  }
}

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
    std::optional<LedgerScope> preparing(std::in_place, timing_.ledger,
                                         "deployed: buffers and group kernels prepared (timed choices included)");
    ModelBuffers buffers(analysis, options.dtype, context_.stream, adjacent_outputs(analysis, plan), held_tensors(analysis, plan));
    const PreparedGroups prepared = prepare_groups(analysis, plan, buffers, context_, result);
    preparing.reset();
    time_groups(prepared, options, result);
    LedgerScope replaying(timing_.ledger, "deployed: whole-model graph");
    const std::string method = result.whole.method;
    GraphReplays replays = time_graph_replays(
        timing_,
        [&](cudaStream_t s) {
          for (auto& k : prepared.kernels)
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
