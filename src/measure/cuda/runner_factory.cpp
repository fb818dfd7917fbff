#include "measure/cuda/runner.h"

namespace modelcost::cuda {

std::unique_ptr<OperatorRunner> make_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  switch (plan.kind) {
    case OpKind::kConv:
      // Patch convs over channels tensor cores cannot take as they are (3-channel images) run
      // as gather + GEMM; cuDNN has no fast kernel for them (patch_conv_runner.cpp).
      if (is_patch_conv(plan.conv) && plan.conv.in_channels % 8 != 0) return make_patch_conv_runner(spec, plan, reason);
      return make_cudnn_conv_runner(spec, plan, reason);
    case OpKind::kPool: return make_cudnn_pool_runner(spec, plan, reason);
    case OpKind::kMatMul: return make_cublaslt_matmul_runner(spec, plan, reason);
    case OpKind::kUnary: case OpKind::kBinary: case OpKind::kCopy: case OpKind::kGather: case OpKind::kReduce:
    case OpKind::kSoftmax: case OpKind::kLayerNorm: case OpKind::kResize: case OpKind::kWhere: case OpKind::kBatchNorm:
      return make_kernel_runner(spec, plan, reason);
    case OpKind::kZeroCost: *reason = "nothing to run: " + plan.reason; return nullptr;
    case OpKind::kUnsupported: *reason = plan.reason; return nullptr;
  }
  *reason = "unknown plan kind";
  return nullptr;
}

}  // namespace modelcost::cuda
