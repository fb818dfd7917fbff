// The rotary angle of the deployed step's kernels (step_kernels.cu, latent_kernels.cu).
#pragma once
#include <cstdint>

namespace modelcost::cuda {

// The angle position * theta^(-2i/d) in turns, reduced to [-1/2, 1/2] before the fast sine and
// cosine (accurate there at any position).
__device__ __forceinline__ void rotary_angle(int64_t position, int i, int head_dim, float log2_theta, float* s, float* c) {
  const float turns = static_cast<float>(position) * exp2f(-2.f * i / head_dim * log2_theta) * 0.15915494309189535f;
  __sincosf((turns - rintf(turns)) * 6.283185307179586f, s, c);
}

}  // namespace modelcost::cuda
