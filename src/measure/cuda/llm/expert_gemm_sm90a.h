// The experts' grouped product on Hopper's warpgroup tensor cores (expert_gemm_sm90a.cu, built for
// sm_90a only): the 64- and 128-row tiles of a prefill, where the product is compute bound.
#pragma once
#include <cuda_runtime.h>

#include "llm/expert_kernels.h"

namespace modelcost::cuda {

// True where it runs: an sm_90 device (H100, H200), tiles of 64 or 128 rows, K a multiple of 64.
bool expert_gemm_wgmma_supported(const ExpertGemmArgs& a);
void launch_expert_gemm_wgmma(const ExpertGemmArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
