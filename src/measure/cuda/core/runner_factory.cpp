#include "core/runner.h"

#include <algorithm>

namespace modelcost::cuda {
namespace {

// The faster of two runners of one node, timed on its buffers, where both apply; else the one that
// does (`first` before `second`), or nullptr.
std::unique_ptr<OperatorRunner> faster_of(std::unique_ptr<OperatorRunner> first, std::unique_ptr<OperatorRunner> second,
                                          const NodeSpec& spec) {
  if (!first || !second) return first ? std::move(first) : std::move(second);
  std::vector<std::unique_ptr<OperatorRunner>> candidates;
  candidates.push_back(std::move(first));
  candidates.push_back(std::move(second));
  return make_fastest_runner(std::move(candidates), measurement_key(spec));
}

}  // namespace

std::unique_ptr<OperatorRunner> make_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  return std::visit(
      Overloaded{
          [&](const ConvParams& c) -> std::unique_ptr<OperatorRunner> {
            // Gather convs (kernel within stride) over channels tensor cores cannot take as they
            // are (3-channel images) run as gather + GEMM; cuDNN has no fast kernel for them
            // (patch_conv_runner.cpp). A 1x1 of them is, channels-last, already the GEMM's
            // matrix: the GEMM alone, timed against gather + GEMM (which NCHW needs).
            if (needs_gather_gemm(c)) return make_patch_conv_runner(spec, c, reason);
            if (is_pointwise_gemm_conv(c) && c.in_channels % 8 != 0) {
              std::string why;
              return faster_of(make_conv_gemm_runner(spec, c, &why), make_patch_conv_runner(spec, c, reason), spec);
            }
            auto cudnn = make_cudnn_conv_runner(spec, c, reason);
            if (!cudnn) return cudnn;
            // Depthwise: the own kernel and cuDNN's conv-only graph with a bias pass after it against
            // cuDNN's timed choice (the graph with its bias add in it won none of the H200 grid's 86
            // depthwise calls, its runtime-fusion engines 2-30x off, and its plans cost the most
            // build time of a depthwise network's --measure);
            // grouped: cuDNN's graph engines and, up to 64 groups, a dense conv over block-diagonal filters against it;
            // 1x1: cuBLASLt's GEMM against it (cuDNN runs some 1x1 shapes 3-5x off the GEMM);
            // a strided kernel within its stride: gather + GEMM against it.
            // The fastest one is kept.
            std::string why;
            std::vector<std::unique_ptr<OperatorRunner>> candidates;
            if (is_depthwise_2d(c)) {
              candidates.push_back(make_depthwise_conv_runner(spec, c, &why));
              candidates.push_back(make_conv_graph_runner(c, &why));
            } else if (c.groups > 1) {
              candidates.push_back(make_conv_graph_runner(c, &why));
              candidates.push_back(make_block_diagonal_conv_runner(spec, c, &why));
            } else if (is_gather_conv(c) && !is_pointwise_gemm_conv(c)) {
              candidates.push_back(make_patch_conv_runner(spec, c, &why));  // strided: gather + GEMM
            } else {
              candidates.push_back(make_conv_gemm_runner(spec, c, &why));
            }
            candidates.push_back(std::move(cudnn));
            candidates.erase(std::remove(candidates.begin(), candidates.end(), nullptr), candidates.end());
            return make_fastest_runner(std::move(candidates), measurement_key(spec));
          },
          [&](const PoolParams& p) -> std::unique_ptr<OperatorRunner> {
            // cuDNN takes symmetric pads and floor-sized outputs, the own kernel any window; where
            // both run, the faster is kept (cuDNN's channels-last average pooling is several
            // times off the memory rate).
            std::string why;
            auto cudnn = make_cudnn_pool_runner(spec, p, &why);
            if (p.kernel.size() > 3) return *reason = why, nullptr;
            return faster_of(make_kernel_runner(spec, plan, reason), std::move(cudnn), spec);
          },
          [&](const MatMulParams& m) -> std::unique_ptr<OperatorRunner> {
            // cuBLASLt tiles a product of tiny K and N far off the memory rate, and runs one of a
            // few rows K-serially: the thin kernel or the skinny weight stream is timed against it
            // where it applies.
            std::string why;
            auto own = make_thin_product_runner(spec, m, &why);
            if (!own) own = make_skinny_product_runner(spec, m, &why);
            return faster_of(std::move(own), make_cublaslt_matmul_runner(spec, m, reason), spec);
          },
          [&](const ZeroCostPlan& z) -> std::unique_ptr<OperatorRunner> {
            *reason = "nothing to run: " + z.reason;
            return nullptr;
          },
          [&](const UnsupportedPlan& u) -> std::unique_ptr<OperatorRunner> {
            *reason = u.reason;
            return nullptr;
          },
          // Every other kind runs on the project's own kernels.
          [&](const ElementwisePlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const CopyPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const GatherPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const ReducePlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const SoftmaxPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const LayerNormPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const BatchNormPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const GroupNormPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const ScanPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const ResizePlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const IndexedPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const RangePlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const PadPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const TopKPlan& p) { return make_topk_runner(spec, p, reason); },
          [&](const ContractionPlan& p) { return make_contraction_runner(spec, p, reason); },
          [&](const ConvTransposePlan& p) { return make_conv_transpose_runner(spec, p, reason); },
          [&](const RecurrentPlan& p) { return make_recurrent_runner(spec, p, reason); },
          [&](const QuantizePlan&) { return make_quantized_runner(spec, plan, reason); },
          [&](const DynamicQuantizePlan&) { return make_quantized_runner(spec, plan, reason); },
          [&](const IntegerMatMulPlan&) { return make_quantized_runner(spec, plan, reason); },
          [&](const QLinearConvPlan&) { return make_quantized_runner(spec, plan, reason); },
          [&](const RoiAlignPlan&) { return make_kernel_runner(spec, plan, reason); },
          [&](const NonZeroPlan& p) { return make_nonzero_runner(spec, p, reason); },
          [&](const NmsPlan& p) { return make_nms_runner(spec, p, reason); },
          // Per node the branch reads its own copies of the outer tensors (model_runner binds the model's).
          [&](const BranchPlan& p) { return make_branch_runner(spec, p, nullptr, reason); },
      },
      plan);
}

}  // namespace modelcost::cuda
