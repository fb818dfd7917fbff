// The skinny weight stream (skinny_gemm.h) as a MatMul / Gemm node's runner and as a matrix
// group's kernel with its bias: a product of 1 to 32 rows (a classifier or pooler at batch 1),
// which cuBLASLt runs K-serially far off the memory rate (ResNet-50's 1x1000x2048 head took 12.3 us
// on the H200 at batch 1 against 5.0 us at batch 32). Both are timed against cuBLASLt by their
// callers, the faster kept.
#include <memory>

#include "core/runner.h"
#include "deployed/group_runner.h"
#include "gemm/skinny_gemm.h"

namespace modelcost::cuda {
namespace {

constexpr DtypeList<1> kSkinnyDtypes = {10};  // fp16: the kernel's operands are __half

// The product's rows once its batch is folded into them, or 0 where the kernel cannot take it: x's
// rows follow each other, one weight matrix stored [N, K] (a linear layer's) shared by the batch,
// no scaling.
int64_t skinny_rows(const MatMulParams& m) {
  if (m.trans_a || !m.trans_b || m.alpha != 1.0) return 0;
  if (m.batch > 1 && (m.b_batch_stride != 0 || m.a_batch_stride != m.m * m.k)) return 0;
  const int64_t rows = m.batch * m.m;
  return rows >= 1 && rows <= kSkinnyMaxRows && m.k % 32 == 0 ? rows : 0;
}

bool row_bias(const MatMulParams& m) { return m.bias == MatMulParams::Bias::kRow && m.beta == 1.0; }

SkinnyGemmArgs skinny_args(const MatMulParams& m, const void* x, const void* w, const void* bias, void* y) {
  SkinnyGemmArgs a;
  a.x = static_cast<const __half*>(x);
  a.w = static_cast<const __half*>(w);
  a.y = static_cast<__half*>(y);
  a.bias = static_cast<const __half*>(bias);
  a.m = static_cast<int>(skinny_rows(m));
  a.n = static_cast<int>(m.n);
  a.k = static_cast<int>(m.k);
  return a;
}

std::string describe(const SkinnyGemmArgs& a) {
  return "skinny weight stream " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k) +
         (a.bias ? " +bias" : "");
}

class SkinnyProductRunner : public OperatorRunner {
 public:
  SkinnyProductRunner(const MatMulParams& m, bool bias_input) : m_(m), bias_input_(bias_input) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext&) override {
    args_ = skinny_args(m_, in[0].data, in[1].data, bias_input_ ? in[2].data : nullptr, out[0].data);
    if (!skinny_gemm_supports(args_)) throw Error(kExitRuntime, "skinny weight stream: operands not 16-byte aligned");
  }
  void launch(cudaStream_t stream) override { launch_skinny_gemm(args_, stream); }
  std::string implementation() const override { return describe(args_); }

 private:
  MatMulParams m_;
  bool bias_input_;
  SkinnyGemmArgs args_;
};

class SkinnyGemmKernel : public GroupKernel {
 public:
  explicit SkinnyGemmKernel(SkinnyGemmArgs args) : args_(args) {}
  void launch(cudaStream_t stream) override { launch_skinny_gemm(args_, stream); }
  std::string implementation() const override { return describe(args_); }

 private:
  SkinnyGemmArgs args_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_skinny_product_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason) {
  if (!accepts_dtype(kSkinnyDtypes, spec.outputs[0].dtype, "skinny weight stream in ", reason)) return nullptr;
  if (!skinny_rows(m) || (m.bias != MatMulParams::Bias::kNone && !row_bias(m))) {
    *reason = "not a skinny product (1-32 rows, weights [N, K], K a multiple of 32, no bias but a [N] row)";
    return nullptr;
  }
  return std::make_unique<SkinnyProductRunner>(m, row_bias(m));
}

std::unique_ptr<GroupKernel> make_skinny_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m) {
  const bool product_only = e.activation == EpilogueActivation::kNone && e.residual < 0 && e.second_residual < 0 &&
                            !e.folds_into_weights() && e.interleaved_rows <= 1;
  if (!takes_dtype(kSkinnyDtypes, view.spec(e.anchor).outputs[0].dtype) || !skinny_rows(m) || !product_only) return nullptr;
  const bool own_bias = row_bias(m);
  if (m.bias != MatMulParams::Bias::kNone && !own_bias) return nullptr;
  const Node& node = view.node(e.anchor);
  const void* bias = own_bias ? view.buffers.data(node.inputs[2]) : e.bias >= 0 ? view.buffers.data(e.bias) : nullptr;
  const SkinnyGemmArgs args = skinny_args(m, view.buffers.data(node.inputs[0]), view.buffers.data(node.inputs[1]), bias,
                                          view.buffers.data(e.output));
  return skinny_gemm_supports(args) ? std::make_unique<SkinnyGemmKernel>(args) : nullptr;
}

}  // namespace modelcost::cuda
