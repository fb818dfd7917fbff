#include "measure/cuda/runner.h"

namespace modelcost::cuda {

std::unique_ptr<OperatorRunner> make_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  switch (plan.kind) {
    case OpKind::kConv: return make_cudnn_conv_runner(spec, plan, reason);
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
