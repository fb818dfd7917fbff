// Checks of CUDA, cuDNN, cuBLAS and CUPTI return codes: a failure becomes Error(kExitRuntime)
// naming the call, so one bad node never aborts the run.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "modelcost/errors.h"

namespace modelcost::cuda {

[[noreturn]] void throw_cuda_error(const char* call, const std::string& what, const char* file, int line);

// Lets `kernel` take `bytes` of dynamic shared memory on the current device: once per kernel and
// device (a function attribute belongs to one device's context; the ranks of a tensor-parallel
// step launch the same kernels on several).
void allow_shared_bytes(const void* kernel, size_t bytes);

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
