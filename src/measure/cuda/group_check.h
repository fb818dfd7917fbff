// Runs one fusion group once on the GPU, for the tests that compare each fused runner with the
// per-node CPU reference.
#pragma once
#include <map>
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

}  // namespace modelcost::cuda
