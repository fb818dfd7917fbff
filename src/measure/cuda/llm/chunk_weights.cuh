// The first step of a split-context decode attention's merge (flash_decoding.cu, latent_decoding.cu):
// each chunk's weight against the largest of the chunks' maxima.
#pragma once
#include <cstdint>

namespace modelcost::cuda {

// By warp 0 of a merge block: the chunks' (maximum, sum) pairs are ml[2 (first + s)], ml[2 (first
// + s) + 1] for s < splits; weight_s[s] gets chunk s's weight and weight_s[splits] the weighted sum
// of the sums (the softmax's denominator). `exp` turns a difference of maxima into a weight
// (e^x for natural-log maxima, 2^x for base-2 ones). The caller synchronises before reading them.
template <typename Exp>
__device__ __forceinline__ void weigh_chunks(const float* ml, int64_t first, int splits, float* weight_s, Exp exp) {
  if (threadIdx.x >= 32) return;
  float m = -INFINITY;
  for (int s = threadIdx.x; s < splits; s += 32) m = fmaxf(m, ml[2 * (first + s)]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float den = 0.f;
  for (int s = threadIdx.x; s < splits; s += 32) {
    const float w = exp(ml[2 * (first + s)] - m);
    weight_s[s] = w;
    den += w * ml[2 * (first + s) + 1];
  }
  for (int o = 16; o > 0; o >>= 1) den += __shfl_xor_sync(0xffffffffu, den, o);
  if (threadIdx.x == 0) weight_s[splits] = den;
}

}  // namespace modelcost::cuda
