// A product whose reduction and output widths are both tiny: y[R, N] = act(x[R, K] w + bias), K
// and N at most 32 (CaiT's talking-heads projections mix 4 heads: K = N = 4 over a million rows).
// cuBLASLt tiles such a product as a GEMM and reaches a tenth of the memory rate; it is a stream
// of x and y, so the kernel is one: a thread per row of x, the weights (and the bias) in shared
// memory as fp32.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/kernels.h"

namespace modelcost::cuda {

struct ThinProductArgs {
  ElementType type = ElementType::kFloat16;
  const void* x = nullptr;     // [rows, k], rows contiguous
  const void* w = nullptr;     // [k, n], or [n, k] with trans_w
  const void* bias = nullptr;  // [n] or nullptr
  void* y = nullptr;           // [rows, n]
  int64_t rows = 0;
  int n = 0, k = 0;
  bool trans_w = false;
  float alpha = 1.f;           // scales the product, not the bias
  bool relu = false;
};

constexpr int kThinProductMaxWidth = 32;

// k and n in 1..32.
bool thin_product_supports(int64_t rows, int64_t n, int64_t k);
void launch_thin_product(const ThinProductArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
