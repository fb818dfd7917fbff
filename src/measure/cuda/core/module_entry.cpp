// The CUDA module's one exported symbol: the table of entry points the analyzer loads.
#include "measure/cuda_entry.h"
#include "modelcost/version.h"

namespace modelcost {

extern "C" __attribute__((visibility("default"))) const CudaModuleApi* modelcost_cuda_module_api() {
  static const CudaModuleApi api = {cuda_module_abi_stamp(), kModelcostVersion, &make_cuda_backend,
                                    &cuda_device_available, &run_node_on_gpu};
  return &api;
}

}  // namespace modelcost
