// Runs one fusion group once on the GPU, for the tests that compare each fused runner with the
// per-node CPU reference.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "measure/host_tensor.h"
#include "modelcost/fusion.h"

namespace modelcost::cuda {

struct GroupRun {
  std::map<int, HostTensor> outputs;  // the group's boundary outputs, by tensor id
  std::string runner;                 // the implementation that ran
  bool fused = false;
};

// `inputs` gives the contents of tensors by id (graph inputs, weights); every other tensor the
// group reads keeps random contents. Channels-last off: values compare with the NCHW reference.
GroupRun run_group_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                          const std::string& dtype);

// Every group of `plan` in order, its buffers placed as the deployed run places them (sibling
// results side by side, in-place tensors held): the graph's outputs, by tensor id.
std::map<int, HostTensor> run_plan_on_gpu(const Analysis& analysis, const FusionPlan& plan, const std::map<int, HostTensor>& inputs,
                                          const std::string& dtype);

// The same with one strategy forced: `make` builds the group's kernel (throws or returns nullptr
// with *why where it does not apply: the run then throws Error with that reason). With
// `channels_last`, 4-D tensors (inputs, weights, outputs) are NHWC on both sides of the call.
class GroupKernel;
class GroupView;
using GroupKernelFactory = std::function<std::unique_ptr<GroupKernel>(const GroupView&, std::string* why)>;
GroupRun run_group_kernel_on_gpu(const Analysis& analysis, const FusedGroup& group, const std::map<int, HostTensor>& inputs,
                                 const std::string& dtype, bool channels_last, const GroupKernelFactory& make);

}  // namespace modelcost::cuda
