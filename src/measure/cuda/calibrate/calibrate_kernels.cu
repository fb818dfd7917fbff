// Kernels for the empirical roofline: a streaming copy (DRAM bandwidth) and register-only FMA
// loops (vector FP32 and FP16 peaks).
#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {

__global__ void stream_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

constexpr int kChains = 8;  // independent FMA chains per thread hide the FMA latency

__global__ void fma_fp32_kernel(float* sink, int iterations) {
  float a[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) a[c] = threadIdx.x * 1e-7f + c;
  const float b = 0.999f, d = 1e-4f;
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = fmaf(a[c], b, d);
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += a[c];
  if (s == 12345.f) sink[threadIdx.x] = s;  // keeps the loop live; never true in practice
}

// HFMA2 chains: kChainsFp16 independent half2 accumulators per thread. Wider than the fp32 loop:
// with 8 chains the fp16 loop reached only ~48 % of the datasheet's vector peak on the H100.
template <int kChainsFp16>
__global__ void fma_fp16_kernel(__half2* sink, int iterations) {
  __half2 a[kChainsFp16];
#pragma unroll
  for (int c = 0; c < kChainsFp16; ++c) a[c] = __floats2half2_rn(threadIdx.x * 1e-4f, c * 1e-3f);
  const __half2 b = __floats2half2_rn(0.999f, 0.999f), d = __floats2half2_rn(1e-3f, 1e-3f);
#pragma unroll 4
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < kChainsFp16; ++c) a[c] = __hfma2(a[c], b, d);
  __half2 s = a[0];
#pragma unroll
  for (int c = 1; c < kChainsFp16; ++c) s = __hadd2(s, a[c]);
  if (__low2float(s) == 12345.f) sink[threadIdx.x] = s;
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void timestamp_kernel(unsigned long long* stamps, int index, unsigned spin_ns) {
  if (threadIdx.x != 0) return;
  const unsigned long long start = global_timer_ns();
  unsigned long long now = start;
  while (now - start < spin_ns) now = global_timer_ns();
  stamps[2 * index] = start;
  stamps[2 * index + 1] = now;
}

void launch_timestamp_kernel(unsigned long long* stamps, int index, unsigned spin_ns, cudaStream_t stream) {
  timestamp_kernel<<<1, 32, 0, stream>>>(stamps, index, spin_ns);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_stream_copy(const void* src, void* dst, size_t bytes, int blocks, cudaStream_t stream) {
  stream_copy_kernel<<<blocks, 512, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16);
  MC_CUDA_CHECK_LAUNCH();
}

double launch_fma_fp32(float* sink, int blocks, int threads, int iterations, cudaStream_t stream) {
  fma_fp32_kernel<<<blocks, threads, 0, stream>>>(sink, iterations);
  MC_CUDA_CHECK_LAUNCH();
  return 2.0 * kChains * double(iterations) * blocks * threads;
}

double launch_fma_fp16(void* sink, int blocks, int threads, int iterations, int chains, cudaStream_t stream) {
  __half2* out = static_cast<__half2*>(sink);
  if (chains >= 32) { chains = 32; fma_fp16_kernel<32><<<blocks, threads, 0, stream>>>(out, iterations); }
  else if (chains >= 16) { chains = 16; fma_fp16_kernel<16><<<blocks, threads, 0, stream>>>(out, iterations); }
  else { chains = 8; fma_fp16_kernel<8><<<blocks, threads, 0, stream>>>(out, iterations); }
  MC_CUDA_CHECK_LAUNCH();
  return 4.0 * chains * double(iterations) * blocks * threads;  // 2 lanes x 2 flops per HFMA2
}

}  // namespace modelcost::cuda
