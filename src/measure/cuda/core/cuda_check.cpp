#include "core/cuda_check.h"

namespace modelcost::cuda {

void throw_cuda_error(const char* call, const std::string& what, const char* file, int line) {
  std::string f = file;
  auto slash = f.rfind('/');
  throw Error(kExitRuntime, std::string(call) + " failed: " + what + " (" + f.substr(slash + 1) + ":" + std::to_string(line) + ")");
}

}  // namespace modelcost::cuda
