// The seam between the core library and the CUDA backend library (src/measure/cuda/), which is
// linked in only where the toolkit was found (MODELCOST_HAVE_CUDA).
#pragma once
#include <memory>
#include <vector>

#include "measure/host_tensor.h"
#include "modelcost/measure.h"

namespace modelcost {

#ifdef MODELCOST_HAVE_CUDA
// Throws Error(kExitRuntime) when no NVIDIA GPU is usable.
std::unique_ptr<Backend> make_cuda_backend(int device);
// True when a CUDA device is visible (tests skip without one).
bool cuda_device_available();
// Runs one node once on device 0 on the given inputs; returns its outputs. For tests that check
// the GPU operators against the CPU reference. channels_last: fp16/bf16 conv and pooling in NHWC
// (the inputs and outputs are then in that layout).
std::vector<HostTensor> run_node_on_gpu(const NodeSpec& spec, const std::vector<HostTensor>& inputs, bool channels_last);
#endif

}  // namespace modelcost
