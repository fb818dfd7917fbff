// Sums over a thread block, for kernels that reduce a row per block.
#pragma once

namespace modelcost::cuda {

// The sum of v over the block, returned to every thread. blockDim.x is a multiple of 32 and at
// most 1024; `scratch` holds one float per warp (32 at most). The leading barrier lets a caller
// sum again into the same scratch right after.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch's previous readers are done
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace modelcost::cuda
