// The rotary angle of the deployed step's kernels (step_kernels.cu, latent_kernels.cu).
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace modelcost::cuda {

// The angle position * theta^(-2i/d) in turns, reduced to [-1/2, 1/2] before the fast sine and
// cosine (accurate there at any position).
__device__ __forceinline__ void rotary_angle(int64_t position, int i, int head_dim, float log2_theta, float* s, float* c) {
  const float turns = static_cast<float>(position) * exp2f(-2.f * i / head_dim * log2_theta) * 0.15915494309189535f;
  __sincosf((turns - rintf(turns)) * 6.283185307179586f, s, c);
}

// Pairs i0 .. i0 + 7 of a rotary part `width` wide (rotate-half: element i with i + width / 2) at
// `position`: `lo` holds elements i0.., `hi` elements i0 + width / 2.., 16 bytes each.
__device__ __forceinline__ void rotate_eight_pairs(const uint4& lo, const uint4& hi, uint4& out_lo, uint4& out_hi, int i0, int width,
                                                   int64_t position, float log2_theta) {
  const __half *x0 = reinterpret_cast<const __half*>(&lo), *x1 = reinterpret_cast<const __half*>(&hi);
  __half *y0 = reinterpret_cast<__half*>(&out_lo), *y1 = reinterpret_cast<__half*>(&out_hi);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    float s, c;
    rotary_angle(position, i0 + j, width, log2_theta, &s, &c);
    const float u = __half2float(x0[j]), v = __half2float(x1[j]);
    y0[j] = __float2half(u * c - v * s);
    y1[j] = __float2half(v * c + u * s);
  }
}

}  // namespace modelcost::cuda
