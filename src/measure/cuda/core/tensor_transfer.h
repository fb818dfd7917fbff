// Host <-> device copies of HostTensors (values as float on the host, the tensor's dtype on the
// device), and random device contents for timing. Never inside a timed region.
#pragma once
#include <cuda_runtime.h>

#include "measure/host_tensor.h"
#include "measure/op_plan.h"

namespace modelcost::cuda {

void upload(const HostTensor& tensor, void* device, cudaStream_t stream);
HostTensor download(const void* device, const TensorSpec& spec, cudaStream_t stream);
// Random contents for input `index` of a node, generated on the device (known values uploaded).
void fill_input(const NodeSpec& spec, const OpPlan& plan, size_t index, void* device, uint64_t seed, cudaStream_t stream);

}  // namespace modelcost::cuda
