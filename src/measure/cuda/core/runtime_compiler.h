// Kernels compiled at run time with NVRTC, the CUDA toolkit's run-time compiler, for the GPU in
// use. NVRTC is loaded with dlopen on first use: where it is missing, nothing compiles and the
// callers keep their precompiled kernels. Each distinct source compiles once per process.
#pragma once
#include <cuda_runtime.h>

#include <string>

namespace modelcost::cuda {

class WallLedger;

// The kernel `name` (extern "C") of `source`, or nullptr with *why (NVRTC missing, or its log).
// A compilation's time is booked in `ledger`.
cudaKernel_t compile_kernel(WallLedger& ledger, const std::string& source, const std::string& name, std::string* why);

}  // namespace modelcost::cuda
