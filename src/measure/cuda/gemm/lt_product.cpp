#include "gemm/lt_product.h"

#include <algorithm>

#include "core/cuda_check.h"

namespace modelcost::cuda {
namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cuda_error(what, cublasLtGetStatusString(status), __FILE__, __LINE__);
}

cudaDataType_t lt_type(int32_t dtype) { return dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F; }

}  // namespace

// Column-major view, as the MatMul runner's: D^T (n x m) = B (n x k, op T of its k x n storage) * A^T.
LtProduct::LtProduct(cublasLtHandle_t handle, Shape s, int32_t dtype, bool allow_tf32, size_t max_workspace)
    : handle_(handle) {
  const cudaDataType_t type = lt_type(dtype);
  const cublasComputeType_t compute = dtype == 1 && allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)), "TRANSB");
  const uint64_t ldb = s.ldb > 0 ? s.ldb : s.k;
  check(cublasLtMatrixLayoutCreate(&b_, type, s.k, s.n, ldb), "layout B");
  check(cublasLtMatrixLayoutCreate(&a_, type, s.k, s.m, s.k), "layout A");
  check(cublasLtMatrixLayoutCreate(&d_, type, s.n, s.m, s.n), "layout D");
  cublasLtMatmulPreference_t pref;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const uint64_t ws = std::min<size_t>(max_workspace, size_t(32) << 20);
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), "workspace");
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, b_, a_, d_, d_, pref, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || returned == 0) throw Error(kExitRuntime, "cuBLASLt offers no algorithm for this product");
  algo_ = result.algo;
  workspace_.resize(result.workspaceSize);
}

LtProduct::~LtProduct() {
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void LtProduct::launch(const void* a, const void* b, void* d, cudaStream_t stream) const {
  const float one = 1.f, zero = 0.f;
  check(cublasLtMatmul(handle_, desc_, &one, b, b_, a, a_, &zero, d, d_, d, d_, &algo_, workspace_.data(), workspace_.bytes(),
                       stream),
        "cublasLtMatmul");
}

}  // namespace modelcost::cuda
