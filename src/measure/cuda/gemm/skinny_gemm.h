// A weight product for few rows (a decode step's batch, a classifier at batch 1):
// y[M,N] = x[M,K] W^T (+ bias) (+ y), the weight stored [N,K] as a linear layer stores it, fp16 in
// and out, fp32 accumulation on the tensor cores.
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
  const __half* bias = nullptr;  // [n], added to every row; nullptr: none
};

constexpr int kSkinnyMaxRows = 32;

// m in 1..32, k a multiple of 32, x, w and y 16-byte aligned (any n: a last block of fewer than 16
// outputs re-reads a valid weight row for the ones past n and stores none of them).
bool skinny_gemm_supports(const SkinnyGemmArgs& a);
void launch_skinny_gemm(const SkinnyGemmArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
