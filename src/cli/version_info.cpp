#include "cli/version_info.h"

#include "measure/cuda_entry.h"
#include "modelcost/version.h"
#include "modelcost_revision.h"

namespace modelcost {

std::string version_text() {
  std::string text = std::string("modelcost ") + kModelcostVersion + " (git " + MODELCOST_REVISION + ")\n";
  const CudaModuleStatus cuda = cuda_module_status();
  if (cuda.loadable) return text + "CUDA module: " + cuda.path + " (loads)";
  if (!cuda.path.empty()) return text + "CUDA module: " + cuda.path + " (present, does not load: " + cuda.problem + ")";
  return text + "CUDA module: none (" + cuda.problem + ")";
}

}  // namespace modelcost
