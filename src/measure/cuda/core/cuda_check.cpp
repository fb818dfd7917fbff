#include "core/cuda_check.h"

#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <utility>


namespace modelcost::cuda {

void throw_cuda_error(const char* call, const std::string& what, const char* file, int line) {
  std::string f = file;
  auto slash = f.rfind('/');
  throw Error(kExitRuntime, std::string(call) + " failed: " + what + " (" + f.substr(slash + 1) + ":" + std::to_string(line) + ")");
}

void allow_shared_bytes(const void* kernel, size_t bytes) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;
  int device = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({kernel, device}).second) return;
  MC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace modelcost::cuda
