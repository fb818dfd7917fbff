// MatMul and Gemm through cuBLASLt. Row-major D = A * B is computed as column-major
// D^T = B^T * A^T, so B is cuBLASLt's first operand. The algorithm is cuBLASLt's heuristic
// first choice, or with --autotune the fastest of its candidates timed on the actual buffers.
// A [N] bias (Gemm's usual C) rides in the epilogue; other biases go through C with beta.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "measure/cuda/kernels.h"
#include "measure/cuda/runner.h"
#include "measure/cuda/sampler.h"

#define MC_CUBLAS_CHECK(call)                                                                              \
  do {                                                                                                     \
    cublasStatus_t mc_status_ = (call);                                                                    \
    if (mc_status_ != CUBLAS_STATUS_SUCCESS)                                                               \
      ::modelcost::cuda::throw_cuda_error(#call, cublasLtGetStatusString(mc_status_), __FILE__, __LINE__); \
  } while (0)

namespace modelcost::cuda {
namespace {

cudaDataType_t cuda_type(int32_t dtype) {
  return dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F;
}

class CublasLtMatmulRunner : public OperatorRunner {
 public:
  CublasLtMatmulRunner(const NodeSpec& spec, const MatMulParams& m) : spec_(spec), m_(m) {}
  ~CublasLtMatmulRunner() override {
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (c_) cublasLtMatrixLayoutDestroy(c_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    handle_ = ctx.lt;
    const int32_t dtype = out[0].spec.dtype;
    const cudaDataType_t type = cuda_type(dtype);
    a_ptr_ = in[0].data;
    b_ptr_ = in[1].data;
    d_ptr_ = out[0].data;
    alpha_ = static_cast<float>(m_.alpha);
    const cublasComputeType_t compute =
        dtype == 1 ? (spec_.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_32F;
    compute_name_ = dtype == 1 ? (spec_.allow_tf32 ? "tf32" : "fp32") : dtype_name(dtype);
    MC_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    // Column-major view: first operand = B, second = A.
    const cublasOperation_t op_first = m_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_second = m_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
    MC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
    const uint64_t n = m_.n, k = m_.k, m = m_.m;
    // B row-major [K,N] = column-major N x K (ld N); transposed: stored [N,K] = column-major K x N (ld K).
    MC_CUBLAS_CHECK(m_.trans_b ? cublasLtMatrixLayoutCreate(&b_, type, k, n, k) : cublasLtMatrixLayoutCreate(&b_, type, n, k, n));
    MC_CUBLAS_CHECK(m_.trans_a ? cublasLtMatrixLayoutCreate(&a_, type, m, k, m) : cublasLtMatrixLayoutCreate(&a_, type, k, m, k));
    MC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, type, n, m, n));
    MC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, type, n, m, n));
    if (m_.batch > 1) {
      const int32_t batch = static_cast<int32_t>(m_.batch);
      const int64_t a_stride = m_.a_batch_stride, b_stride = m_.b_batch_stride, d_stride = m_.m * m_.n;
      for (auto [layout, stride] : {std::pair{a_, a_stride}, std::pair{b_, b_stride}, std::pair{c_, d_stride}, std::pair{d_, d_stride}}) {
        MC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
        MC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
      }
    }
    set_bias(in, out, ctx, type);
    choose_algorithm(ctx);
  }

  void launch(cudaStream_t stream) override {
    MC_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha_, b_ptr_, b_, a_ptr_, a_, &beta_, c_ptr_ ? c_ptr_ : d_ptr_, c_,
                                   d_ptr_, d_, &algo_, workspace_.data(), workspace_.bytes(), stream));
  }

  std::string implementation() const override {
    return "cublasLt " + compute_name_ + (epilogue_bias_ ? " +bias epilogue" : "") + (tuned_ ? " (autotuned)" : " (heuristic)");
  }

 private:
  void set_bias(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx, cudaDataType_t type) {
    using Bias = MatMulParams::Bias;
    if (m_.bias == Bias::kNone) return;
    if (m_.bias == Bias::kRow && m_.beta == 1.0) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      MC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      const void* bias = in[2].data;
      MC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      MC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
      epilogue_bias_ = true;
      return;
    }
    beta_ = static_cast<float>(m_.beta);
    if (m_.bias == Bias::kFull) {
      c_ptr_ = in[2].data;
      return;
    }
    // Scalar, column or row-with-beta bias: expanded once to a full M x N matrix (not timed).
    const int bytes = static_cast<int>(dtype_size(out[0].spec.dtype));
    expanded_bias_.resize(static_cast<size_t>(m_.m * m_.n * bytes));
    StridedCopy expand;
    expand.dims = {m_.m, m_.n};
    expand.dst_strides = {m_.n, 1};
    expand.src_strides = {m_.bias == Bias::kColumn ? 1 : 0, m_.bias == Bias::kRow ? 1 : 0};
    launch_strided_copy(bytes, in[2].data, expanded_bias_.data(), expand, ctx.stream);
    c_ptr_ = expanded_bias_.data();
  }

  void choose_algorithm(CudaContext& ctx) {
    cublasLtMatmulPreference_t pref;
    MC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t max_ws = std::min<size_t>(ctx.max_workspace_bytes, size_t(64) << 20);
    MC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
    std::vector<cublasLtMatmulHeuristicResult_t> results(ctx.autotune ? 16 : 1);
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, b_, a_, c_, d_, pref,
                                                                 static_cast<int>(results.size()), results.data(), &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (status != CUBLAS_STATUS_SUCCESS || returned == 0)
      throw Error(kExitRuntime, "cuBLASLt offers no algorithm for this product");
    workspace_.resize(max_ws);
    algo_ = results[0].algo;
    if (!ctx.autotune || returned == 1) return;
    // Time each candidate as a measurement times (CUPTI kernel durations); skip any it refuses.
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < returned; ++i) {
      algo_ = results[i].algo;
      if (cublasLtMatmul(handle_, desc_, &alpha_, b_ptr_, b_, a_ptr_, a_, &beta_, c_ptr_ ? c_ptr_ : d_ptr_, c_, d_ptr_, d_,
                         &algo_, workspace_.data(), workspace_.bytes(), ctx.stream) != CUBLAS_STATUS_SUCCESS)
        continue;
      const double us = quick_median_us([this](cudaStream_t s) { launch(s); }, ctx.stream);
      if (us < best) {
        best = us;
        best_index_ = i;
      }
    }
    algo_ = results[best_index_].algo;
    tuned_ = true;
  }

  NodeSpec spec_;
  MatMulParams m_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer workspace_, expanded_bias_;
  const void *a_ptr_ = nullptr, *b_ptr_ = nullptr;
  const void* c_ptr_ = nullptr;
  void* d_ptr_ = nullptr;
  float alpha_ = 1.f, beta_ = 0.f;
  bool epilogue_bias_ = false, tuned_ = false;
  int best_index_ = 0;
  std::string compute_name_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_cublaslt_matmul_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (dtype != 1 && dtype != 10 && dtype != 16) {
    *reason = std::string("MatMul in ") + dtype_name(dtype);
    return nullptr;
  }
  return std::make_unique<CublasLtMatmulRunner>(spec, m);
}

}  // namespace modelcost::cuda
