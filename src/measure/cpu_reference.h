// CPU reference implementations of every operation kind the GPU runners implement, used to
// check the GPU kernels in tests and to time nodes with --measure --cpu. Plain loops, with
// Eigen for the matrix products (convolution through im2col).
#pragma once
#include <vector>

#include "measure/host_tensor.h"
#include "measure/op_plan.h"

namespace modelcost {

// Output tensors shaped and typed as the spec's outputs (absent outputs stay empty).
std::vector<HostTensor> make_outputs(const NodeSpec& spec);

// Computes outputs from inputs (inputs[i] == nullptr for an omitted input). Results are rounded
// to each output's dtype. Throws Error(kExitRuntime) for a plan kind it cannot run.
void run_cpu_reference(const NodeSpec& spec, const OpPlan& plan, const std::vector<const HostTensor*>& inputs,
                       std::vector<HostTensor>& outputs);

// The elementwise functions of elementwise_ops.h in double (inputs past the op's arity ignored).
double apply_elementwise(ElementwiseOp op, double a, double b, double c, double alpha, double beta);

// The reference kernels of the heavier kinds (cpu_reference_nn.cpp).
void cpu_conv(const ConvParams& c, const HostTensor& x, const HostTensor& w, const HostTensor* bias, HostTensor& y);
void cpu_pool(const PoolParams& p, const HostTensor& x, HostTensor& y);
void cpu_matmul(const MatMulParams& m, const HostTensor& a, const HostTensor& b, const HostTensor* bias, HostTensor& y);
void cpu_resize(const ResizePlan& plan, const HostTensor& x, HostTensor& y);
// Gathers and scatters by index tensors (cpu_reference_indexed.cpp); inputs as run_cpu_reference's.
void cpu_indexed(const IndexedPlan& plan, const std::vector<const HostTensor*>& inputs, HostTensor& y);
// TopK (indices may be nullptr when that output is omitted) and the index-mapped Pad modes.
void cpu_topk(const TopKPlan& plan, const HostTensor& x, HostTensor& values, HostTensor* indices);
void cpu_pad(const PadPlan& plan, const HostTensor& x, HostTensor& y);

}  // namespace modelcost
