// Runs a fusion group on the GPU and its members one by one on the CPU reference, on the same
// random inputs, for the GPU tests of the deployed view's runners. Only for builds with CUDA.
#pragma once
#include "deployed/group_check.h"
#include "measure/cuda/gpu_check.h"
#include "modelcost/fusion.h"

namespace modelcost::testing {
namespace {

struct GroupResult {
  cuda::GroupRun gpu;
  std::map<int, HostTensor> cpu;
};

// The CPU reference of the group holding node `anchor`; `external` receives its random inputs.
inline std::map<int, HostTensor> run_group_on_cpu(const Analysis& a, const FusedGroup& group, const std::string& dtype,
                                                  std::map<int, HostTensor>& external) {
  std::map<int, HostTensor> values;  // every tensor the CPU side knows
  uint64_t seed = 7;
  for (size_t m : group.members) {
    const NodeSpec spec = make_node_spec(a.nodes[m], dtype);
    const OpPlan plan_m = plan_operation(spec);
    const Node& node = *a.nodes[m].node;
    std::vector<const HostTensor*> in;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int id = node.inputs[i];
      if (id >= 0 && !values.count(id)) {
        values[id] = random_input(spec, plan_m, i, ++seed);
        external[id] = values[id];
      }
      in.push_back(id >= 0 ? &values[id] : nullptr);
    }
    auto out = make_outputs(spec);
    if (is_zero_cost(plan_m)) {
      out[0].data = in[0]->data;  // reshape-like: the same elements
    } else {
      run_cpu_reference(spec, plan_m, in, out);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o)
      if (node.outputs[o] >= 0) values[node.outputs[o]] = out[o];
  }
  std::map<int, HostTensor> outputs;
  for (int id : group.outputs) outputs[id] = values[id];
  return outputs;
}

inline const FusedGroup* group_of(const Analysis& a, const FusionPlan& plan, const std::string& anchor) {
  for (const FusedGroup& g : plan.groups)
    for (size_t m : g.members)
      if (a.nodes[m].node->name == anchor) return &g;
  return nullptr;
}

// The group of `plan` holding node `anchor`, run on the CPU reference into r.cpu; `external`
// receives its random inputs. Null, and a test failure, where no group holds the node.
inline const FusedGroup* run_group_cpu_side(const AnalysisRun& run, const FusionPlan& plan, const std::string& anchor,
                                            const std::string& dtype, std::map<int, HostTensor>& external, GroupResult& r) {
  const FusedGroup* group = group_of(run.analysis, plan, anchor);
  EXPECT_NE(group, nullptr) << anchor;
  if (group) r.cpu = run_group_on_cpu(run.analysis, *group, dtype, external);
  return group;
}

// Runs the group holding node `anchor` on both sides; inputs from outside the group are random.
inline GroupResult run_group(const AnalysisRun& run, const std::string& anchor, const std::string& dtype) {
  const FusionPlan plan = fuse(run.analysis);
  GroupResult r;
  std::map<int, HostTensor> external;
  if (const FusedGroup* group = run_group_cpu_side(run, plan, anchor, dtype, external, r))
    r.gpu = cuda::run_group_on_gpu(run.analysis, *group, external, dtype);
  return r;
}

// The same with the group's kernel built by `make`, channels-last where asked: 4-D tensors go to
// the GPU as NHWC and come back as NCHW.
inline GroupResult run_group_with(const AnalysisRun& run, const std::string& anchor, const std::string& dtype, bool channels_last,
                                  const cuda::GroupKernelFactory& make) {
  const FusionPlan plan = fuse(run.analysis);
  GroupResult r;
  std::map<int, HostTensor> external;
  const FusedGroup* group = run_group_cpu_side(run, plan, anchor, dtype, external, r);
  if (!group) return r;
  if (channels_last)
    for (auto& [id, t] : external)
      if (t.shape.size() == 4) t = relayout(t, true);
  r.gpu = cuda::run_group_kernel_on_gpu(run.analysis, *group, external, dtype, channels_last, make);
  if (channels_last)
    for (auto& [id, t] : r.gpu.outputs)
      if (t.shape.size() == 4) t = relayout(t, false);
  return r;
}

// Every group of the plan on the GPU, its buffers placed as the deployed run places them, against
// every node on the CPU reference: the graph's outputs.
inline GroupResult run_plan(const AnalysisRun& run, const FusionPlan& plan, const std::string& dtype) {
  FusedGroup whole;
  for (size_t n = 0; n < run.analysis.nodes.size(); ++n) whole.members.push_back(n);
  whole.outputs = run.analysis.graph->outputs;
  GroupResult r;
  std::map<int, HostTensor> external;
  r.cpu = run_group_on_cpu(run.analysis, whole, dtype, external);
  r.gpu.outputs = cuda::run_plan_on_gpu(run.analysis, plan, external, dtype);
  r.gpu.runner = "the whole plan";
  return r;
}

inline void expect_close(const GroupResult& r, double tolerance) {
  ASSERT_FALSE(r.gpu.outputs.empty());
  for (const auto& [id, gpu] : r.gpu.outputs) EXPECT_LT(relative_error(gpu, r.cpu.at(id)), tolerance) << r.gpu.runner;
}

}  // namespace
}  // namespace modelcost::testing
