// The weight products of a deployed decoder step (a decode's few rows, a prefill's many):
// y[M,N] = x[M,K] W^T with the weight stored [N,K] as a linear layer stores it, fp16 in and out, fp32 accumulation, on cuBLASLt or on
// modelcost's skinny kernel (skinny_gemm.h; up to 32 rows), whichever the autotune finds faster.
// `accumulate` adds the product to y (cuBLASLt: beta 1, C = D): the residual add of a block's output.
#pragma once
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gemm/skinny_gemm.h"

namespace modelcost::cuda {

struct StepGemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool accumulate = false;
  // Rows of x and y further apart than k and n (0: k, n): a product reading or writing a slice of
  // wider rows. `batch` products of the same shape (multi-head latent attention's per-head ones):
  // product i reads x + i * x_batch_stride and weight w + i * n * k, writes y + i * y_batch_stride.
  int64_t x_ld = 0, y_ld = 0;
  int64_t batch = 1, x_batch_stride = 0, y_batch_stride = 0;
  bool plain() const { return (x_ld == 0 || x_ld == k) && (y_ld == 0 || y_ld == n) && batch == 1; }
};

struct GemmWorkspace {
  void* data = nullptr;
  size_t bytes = 0;
};

// Kernel nodes of a captured CUDA graph (collectives and library kernels included).
int64_t count_kernel_nodes(cudaGraph_t graph);

class StepGemm {
 public:
  StepGemm(cublasLtHandle_t lt, const StepGemmShape& shape, GemmWorkspace workspace);
  ~StepGemm();
  StepGemm(const StepGemm&) = delete;
  StepGemm& operator=(const StepGemm&) = delete;

  // Times cuBLASLt's heuristic candidates and the skinny kernel on these buffers, each as 20
  // products in a CUDA graph cycling through `weights` (the layers' copies: read from DRAM, as
  // the step reads them), and keeps the fastest that runs as one kernel (before capture).
  void autotune(const __half* x, const std::vector<const __half*>& weights, __half* y, cudaStream_t stream);
  void enqueue(const __half* x, const __half* w, __half* y, cudaStream_t stream) const;
  const StepGemmShape& shape() const { return shape_; }
  std::string description() const;  // "cuBLASLt 1x2560x2048 (candidate 3 of 8, ...)"
  bool uses_skinny_kernel() const { return skinny_; }

 private:
  SkinnyGemmArgs skinny_args(const __half* x, const __half* w, __half* y) const;
  cublasLtHandle_t lt_;
  StepGemmShape shape_;
  GemmWorkspace workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t w_ = nullptr, x_ = nullptr, y_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  static constexpr int kMaxCandidates = 32;
  cublasLtMatmulAlgo_t candidates_algos_[kMaxCandidates]{};
  int chosen_ = 0, candidates_ = 0, ran_ = 0, chosen_kernels_ = 0;
  double chosen_us_ = 0, skinny_us_ = 0;
  bool skinny_ = false;
};

}  // namespace modelcost::cuda
