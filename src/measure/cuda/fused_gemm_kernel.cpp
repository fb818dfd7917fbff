// A MatMul / Gemm with its epilogue in one cuBLASLt call: D = act(A B + C + bias) with the bias
// a [N] vector in the epilogue (CUBLASLT_EPILOGUE_BIAS, RELU_BIAS, GELU_BIAS; cuBLASLt's GELU is
// the tanh form) and the residual through C with beta = 1. Row-major D = A B is computed as
// column-major D^T = B^T A^T, so B is cuBLASLt's first operand. The algorithm is the heuristic's
// first, or the fastest of its candidates with --autotune.
#include <cublasLt.h>

#include <limits>

#include "measure/cuda/group_runner.h"
#include "measure/cuda/sampler.h"

#define MC_LT_CHECK(call)                                                                                  \
  do {                                                                                                     \
    cublasStatus_t mc_status_ = (call);                                                                    \
    if (mc_status_ != CUBLAS_STATUS_SUCCESS)                                                               \
      ::modelcost::cuda::throw_cuda_error(#call, cublasLtGetStatusString(mc_status_), __FILE__, __LINE__); \
  } while (0)

namespace modelcost::cuda {
namespace {

cublasLtEpilogue_t epilogue_of(bool bias, EpilogueActivation act) {
  switch (act) {
    case EpilogueActivation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case EpilogueActivation::kGelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

class FusedGemmKernel : public GroupKernel {
 public:
  ~FusedGemmKernel() override {
    for (auto* layout : {a_, b_, c_, d_})
      if (layout) cublasLtMatrixLayoutDestroy(layout);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  bool prepare(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m, std::string* why) {
    handle_ = view.cuda.lt;
    const Node& node = view.node(e.anchor);
    const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
    if (dtype != 10 && dtype != 16 && dtype != 1) {
      *why = "matrix product in an unsupported dtype";
      return false;
    }
    const cudaDataType_t type = dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F;
    using Bias = MatMulParams::Bias;
    const bool own_bias = m.bias == Bias::kRow && m.beta == 1.0;
    if ((m.bias != Bias::kNone && !own_bias) || m.alpha != 1.0) {
      *why = "Gemm with a bias other than a [N] row, or alpha != 1";
      return false;
    }
    a_ptr_ = view.buffers.data(node.inputs[0]);
    b_ptr_ = view.buffers.data(node.inputs[1]);
    d_ptr_ = view.buffers.data(e.output);
    c_ptr_ = e.residual >= 0 ? view.buffers.data(e.residual) : d_ptr_;
    beta_ = e.residual >= 0 ? 1.f : 0.f;
    const void* bias = own_bias ? view.buffers.data(node.inputs[2]) : e.bias >= 0 ? view.buffers.data(e.bias) : nullptr;
    MC_LT_CHECK(cublasLtMatmulDescCreate(&desc_, dtype == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_first = m.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_second = m.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MC_LT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
    MC_LT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
    const cublasLtEpilogue_t epilogue = epilogue_of(bias != nullptr, e.activation);
    MC_LT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    if (bias) {
      MC_LT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      MC_LT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
    }
    const uint64_t n = m.n, k = m.k, rows = m.m;
    MC_LT_CHECK(m.trans_b ? cublasLtMatrixLayoutCreate(&b_, type, k, n, k) : cublasLtMatrixLayoutCreate(&b_, type, n, k, n));
    MC_LT_CHECK(m.trans_a ? cublasLtMatrixLayoutCreate(&a_, type, rows, k, rows) : cublasLtMatrixLayoutCreate(&a_, type, k, rows, k));
    MC_LT_CHECK(cublasLtMatrixLayoutCreate(&d_, type, n, rows, n));
    MC_LT_CHECK(cublasLtMatrixLayoutCreate(&c_, type, n, rows, n));
    if (m.batch > 1) {
      const int32_t batch = static_cast<int32_t>(m.batch);
      const int64_t d_stride = m.m * m.n;
      for (auto [layout, stride] : {std::pair{a_, m.a_batch_stride}, std::pair{b_, m.b_batch_stride}, std::pair{c_, d_stride},
                                    std::pair{d_, d_stride}}) {
        MC_LT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
        MC_LT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
      }
    }
    bias_ = bias != nullptr;
    activation_ = e.activation;
    residual_ = e.residual >= 0;
    if (choose_algorithm(view.cuda)) return true;
    *why = "cuBLASLt offers no algorithm for this epilogue";
    return false;
  }

  void launch(cudaStream_t stream) override { MC_LT_CHECK(call(stream)); }

  std::string implementation() const override {
    std::string s = "cublasLt";
    if (bias_) s += " +bias";
    if (activation_ == EpilogueActivation::kRelu) s += " +relu";
    if (activation_ == EpilogueActivation::kGelu) s += " +gelu(tanh)";
    if (residual_) s += " +residual (C, beta 1)";
    return s + " epilogue";
  }

 private:
  cublasStatus_t call(cudaStream_t stream) {
    return cublasLtMatmul(handle_, desc_, &alpha_, b_ptr_, b_, a_ptr_, a_, &beta_, c_ptr_, c_, d_ptr_, d_, &algo_,
                          workspace_.data(), workspace_.bytes(), stream);
  }

  bool choose_algorithm(CudaContext& ctx) {
    cublasLtMatmulPreference_t pref;
    MC_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t max_ws = std::min<size_t>(ctx.max_workspace_bytes, size_t(64) << 20);
    MC_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
    std::vector<cublasLtMatmulHeuristicResult_t> results(ctx.autotune ? 16 : 1);
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, b_, a_, c_, d_, pref,
                                                                 static_cast<int>(results.size()), results.data(), &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (status != CUBLAS_STATUS_SUCCESS || returned == 0) return false;
    workspace_.resize(max_ws);
    algo_ = results[0].algo;
    double best = std::numeric_limits<double>::infinity();
    int best_index = 0;
    for (int i = 0; ctx.autotune && i < returned; ++i) {
      algo_ = results[i].algo;
      if (call(ctx.stream) != CUBLAS_STATUS_SUCCESS) continue;
      const double us = quick_median_us([this](cudaStream_t s) { launch(s); }, ctx.stream);
      if (us < best) {
        best = us;
        best_index = i;
      }
    }
    algo_ = results[best_index].algo;
    return true;
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer workspace_;
  const void *a_ptr_ = nullptr, *b_ptr_ = nullptr, *c_ptr_ = nullptr;
  void* d_ptr_ = nullptr;
  float alpha_ = 1.f, beta_ = 0.f;
  bool bias_ = false, residual_ = false;
  EpilogueActivation activation_ = EpilogueActivation::kNone;
};

}  // namespace

std::unique_ptr<GroupKernel> make_fused_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why) {
  auto kernel = std::make_unique<FusedGemmKernel>();
  if (!kernel->prepare(view, e, std::get<MatMulParams>(view.plan(e.anchor)), why)) return nullptr;
  return kernel;
}

}  // namespace modelcost::cuda
