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
// Einsum's loop nest, ConvTranspose and the recurrent layers (cpu_reference_products.cpp);
// outputs as run_cpu_reference's (an omitted one empty).
void cpu_contraction(const ContractionPlan& plan, const HostTensor& a, const HostTensor& b, HostTensor& y);
void cpu_conv_transpose(const ConvParams& c, const HostTensor& x, const HostTensor& w, const HostTensor* bias, HostTensor& y);
void cpu_recurrent(const RecurrentPlan& plan, const std::vector<const HostTensor*>& inputs, std::vector<HostTensor>& outputs);
// The quantization ops (cpu_reference_quantized.cpp).
void cpu_quantize(const QuantizePlan& plan, const std::vector<const HostTensor*>& inputs, HostTensor& y);
void cpu_dynamic_quantize(const HostTensor& x, std::vector<HostTensor>& outputs);
void cpu_integer_matmul(const IntegerMatMulPlan& plan, const std::vector<const HostTensor*>& inputs, HostTensor& y);
void cpu_qlinear_conv(const QLinearConvPlan& plan, const std::vector<const HostTensor*>& inputs, HostTensor& y);

// The detection kinds at the analyzer's output sizes (cpu_reference_detection.cpp).
void cpu_roi_align(const RoiAlignPlan& plan, const std::vector<const HostTensor*>& inputs, HostTensor& y);
void cpu_nonzero(const NonZeroPlan& plan, const HostTensor& x, HostTensor& y);
void cpu_nms(const NmsPlan& plan, const HostTensor& boxes, const HostTensor& scores, HostTensor& y);

}  // namespace modelcost
