// Kernel of thin_product.h: a thread per row of x, the row and its N sums in registers. K and N
// are rounded up to a compiled width (4, 8, 16 or 32, the weights zero-padded); where they are the
// width itself and the rows aligned, the row is read and written in vectors of up to 16 bytes.
#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "gemm/thin_product.h"

namespace modelcost::cuda {
namespace {

// Elements of T per vector access of a W-wide row: up to 16 bytes.
template <typename T, int W>
constexpr int vector_width() {
  return std::min<int>(W, 16 / sizeof(T));
}

template <typename T, int K, int N>
__global__ void thin_product_kernel(ThinProductArgs a, bool vectors) {
  __shared__ float w[K * N];  // [K][N], alpha applied, zero past a.k and a.n
  __shared__ float bias[N];
  const T* wt = static_cast<const T*>(a.w);
  for (int i = threadIdx.x; i < K * N; i += blockDim.x) {
    const int kk = i / N, nn = i % N;
    const bool inside = kk < a.k && nn < a.n;
    w[i] = inside ? a.alpha * to_float(a.trans_w ? wt[nn * a.k + kk] : wt[kk * a.n + nn]) : 0.f;
  }
  for (int i = threadIdx.x; i < N; i += blockDim.x)
    bias[i] = a.bias && i < a.n ? to_float(static_cast<const T*>(a.bias)[i]) : 0.f;
  __syncthreads();
  constexpr int kIn = vector_width<T, K>(), kOut = vector_width<T, N>();
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  for (int64_t row = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; row < a.rows; row += int64_t{gridDim.x} * blockDim.x) {
    float xv[K];
    if (vectors) {
#pragma unroll
      for (int c = 0; c < K / kIn; ++c) {
        const Pack<T, kIn> p = reinterpret_cast<const Pack<T, kIn>*>(x + row * K)[c];
#pragma unroll
        for (int j = 0; j < kIn; ++j) xv[c * kIn + j] = to_float(p.v[j]);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < K; ++kk) xv[kk] = kk < a.k ? to_float(x[row * a.k + kk]) : 0.f;
    }
    float acc[N];
#pragma unroll
    for (int nn = 0; nn < N; ++nn) acc[nn] = bias[nn];
#pragma unroll
    for (int kk = 0; kk < K; ++kk)
#pragma unroll
      for (int nn = 0; nn < N; ++nn) acc[nn] = fmaf(xv[kk], w[kk * N + nn], acc[nn]);
    if (a.relu)
#pragma unroll
      for (int nn = 0; nn < N; ++nn) acc[nn] = fmaxf(acc[nn], 0.f);
    if (vectors) {
#pragma unroll
      for (int c = 0; c < N / kOut; ++c) {
        Pack<T, kOut> p;
#pragma unroll
        for (int j = 0; j < kOut; ++j) p.v[j] = from_float<T>(acc[c * kOut + j]);
        reinterpret_cast<Pack<T, kOut>*>(y + row * N)[c] = p;
      }
    } else {
#pragma unroll
      for (int nn = 0; nn < N; ++nn)
        if (nn < a.n) y[row * a.n + nn] = from_float<T>(acc[nn]);
    }
  }
}

// The compiled width for k or n: 4, 8, 16 or 32.
int width_for(int v) { return v <= 4 ? 4 : v <= 8 ? 8 : v <= 16 ? 16 : 32; }

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename T, int K, int N>
void launch_widths(const ThinProductArgs& a, cudaStream_t stream) {
  const size_t in_bytes = sizeof(T) * vector_width<T, K>(), out_bytes = sizeof(T) * vector_width<T, N>();
  const bool vectors = a.k == K && a.n == N && aligned(a.x, in_bytes) && aligned(a.y, out_bytes);
  // Blocks stride over the rows past this many, so that few of them load the weights.
  constexpr int kMaxBlocks = 8192;
  thin_product_kernel<T, K, N><<<std::min(grid_for(a.rows), kMaxBlocks), kThreads, 0, stream>>>(a, vectors);
}

template <typename T, int K>
void launch_k(const ThinProductArgs& a, cudaStream_t stream) {
  switch (width_for(a.n)) {
    case 4: launch_widths<T, K, 4>(a, stream); break;
    case 8: launch_widths<T, K, 8>(a, stream); break;
    case 16: launch_widths<T, K, 16>(a, stream); break;
    default: launch_widths<T, K, 32>(a, stream); break;
  }
}

template <typename T>
void launch_typed(const ThinProductArgs& a, cudaStream_t stream) {
  switch (width_for(a.k)) {
    case 4: launch_k<T, 4>(a, stream); break;
    case 8: launch_k<T, 8>(a, stream); break;
    case 16: launch_k<T, 16>(a, stream); break;
    default: launch_k<T, 32>(a, stream); break;
  }
}

}  // namespace

bool thin_product_supports(int64_t rows, int64_t n, int64_t k) {
  return k >= 1 && k <= kThinProductMaxWidth && n >= 1 && n <= kThinProductMaxWidth && rows >= 1;
}

void launch_thin_product(const ThinProductArgs& a, cudaStream_t stream) {
  MC_DISPATCH_TYPE(a.type, launch_typed<T>(a, stream));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
