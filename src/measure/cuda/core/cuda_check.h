// Checks of CUDA, cuDNN, cuBLAS and CUPTI return codes: a failure becomes Error(kExitRuntime)
// naming the call, so one bad node never aborts the run.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "modelcost/errors.h"

namespace modelcost::cuda {

[[noreturn]] void throw_cuda_error(const char* call, const std::string& what, const char* file, int line);

}  // namespace modelcost::cuda

#define MC_CUDA_CHECK(call)                                                                     \
  do {                                                                                          \
    cudaError_t mc_status_ = (call);                                                            \
    if (mc_status_ != cudaSuccess)                                                              \
      ::modelcost::cuda::throw_cuda_error(#call, cudaGetErrorString(mc_status_), __FILE__, __LINE__); \
  } while (0)

#define MC_CUDA_CHECK_LAUNCH() MC_CUDA_CHECK(cudaGetLastError())

// For cuBLASLt calls; the files that use it include <cublasLt.h> themselves.
#define MC_CUBLASLT_CHECK(call)                                                                            \
  do {                                                                                                     \
    cublasStatus_t mc_status_ = (call);                                                                    \
    if (mc_status_ != CUBLAS_STATUS_SUCCESS)                                                               \
      ::modelcost::cuda::throw_cuda_error(#call, cublasLtGetStatusString(mc_status_), __FILE__, __LINE__); \
  } while (0)
