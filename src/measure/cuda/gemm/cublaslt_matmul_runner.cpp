// MatMul and Gemm through cuBLASLt. Row-major D = A * B is computed as column-major
// D^T = B^T * A^T, so B is cuBLASLt's first operand. The algorithm is cuBLASLt's heuristic
// first choice, or with --autotune the fastest of its candidates timed on the actual buffers.
// A [N] bias (Gemm's usual C) rides in the epilogue; other biases go through C with beta.
#include <memory>

#include "core/kernels.h"
#include "core/runner.h"
#include "gemm/cublaslt_product.h"

namespace modelcost::cuda {
namespace {

cudaDataType_t cuda_type(int32_t dtype) {
  return dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F;
}

class CublasLtMatmulRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  CublasLtMatmulRunner(const NodeSpec& spec, const MatMulParams& m) : spec_(spec), m_(m) {}
  ~CublasLtMatmulRunner() override {
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
    MC_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    // Column-major view: first operand = B, second = A.
    const cublasOperation_t op_first = m_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_second = m_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
    MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
    layouts_ = std::make_unique<LtProductLayouts>(m_, type);
    set_bias(in, out, ctx, type);
    auto call = [this](const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) { return this->call(algo, stream); };
    if (!choose_lt_algorithm(ctx, desc_, *layouts_, workspace_, call, choice_))
      throw Error(kExitRuntime, "cuBLASLt offers no algorithm for this product");
  }

  void launch(cudaStream_t stream) override { MC_CUBLASLT_CHECK(call(choice_.algo, stream)); }

  std::string implementation() const override {
    return "cublasLt " + compute_name_ + (epilogue_bias_ ? " +bias epilogue" : "") + (choice_.tuned ? " (autotuned)" : " (heuristic)");
  }

 private:
  void set_bias(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx, cudaDataType_t type) {
    using Bias = MatMulParams::Bias;
    if (m_.bias == Bias::kNone) return;
    if (m_.bias == Bias::kRow && m_.beta == 1.0) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      const void* bias = in[2].data;
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
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

  cublasStatus_t call(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
    const LtProductLayouts& l = *layouts_;
    return cublasLtMatmul(handle_, desc_, &alpha_, b_ptr_, l.b, a_ptr_, l.a, &beta_, c_ptr_ ? c_ptr_ : d_ptr_, l.c, d_ptr_, l.d,
                          &algo, workspace_.data(), workspace_.bytes(), stream);
  }

  NodeSpec spec_;
  MatMulParams m_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  std::unique_ptr<LtProductLayouts> layouts_;
  LtAlgorithmChoice choice_;
  DeviceBuffer workspace_, expanded_bias_;
  const void *a_ptr_ = nullptr, *b_ptr_ = nullptr;
  const void* c_ptr_ = nullptr;
  void* d_ptr_ = nullptr;
  float alpha_ = 1.f, beta_ = 0.f;
  bool epilogue_bias_ = false;
  std::string compute_name_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_cublaslt_matmul_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!accepts_dtype(CublasLtMatmulRunner::kDtypes, dtype, "MatMul in ", reason)) return nullptr;
  return std::make_unique<CublasLtMatmulRunner>(spec, m);
}

}  // namespace modelcost::cuda
