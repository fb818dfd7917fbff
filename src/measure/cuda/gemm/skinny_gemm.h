// A weight product for few rows (a decode step's batch): y[M,N] = x[M,K] W^T (+ y), the weight
// stored [N,K] as a linear layer stores it, fp16 in and out, fp32 accumulation on the tensor cores.
// Decode products read each weight once and do almost no arithmetic per byte, so the kernel is a
// stream of the weights: a block per 16 outputs, its warps splitting K, each thread keeping sixteen
// 16-byte loads in flight, the batch rows riding along as the product's narrow side.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace modelcost::cuda {

struct SkinnyGemmArgs {
  const __half* x = nullptr;  // [m, k]
  const __half* w = nullptr;  // [n, k]
  __half* y = nullptr;        // [m, n]
  int m = 0, n = 0, k = 0;
  bool accumulate = false;    // y += x W^T (the residual add of a block's output)
};

constexpr int kSkinnyMaxRows = 32;

// m in 1..32, n a multiple of 16, k a multiple of 32, pointers 16-byte aligned.
bool skinny_gemm_supports(const SkinnyGemmArgs& a);
void launch_skinny_gemm(const SkinnyGemmArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
