// The seam between the analyzer and the CUDA backend, which is a shared module
// (libmodelcost_cuda.so) loaded with dlopen only when a run measures: the analyzer links no
// CUDA library. The module exports one C function returning a table of entry points; the
// analyzer checks the table's ABI stamp (same source revision, same layouts) before using it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "measure/host_tensor.h"
#include "modelcost/measure.h"

namespace modelcost {

// Changes with every layout the module and the analyzer share (Analysis, MeasureOptions, ...).
constexpr uint64_t cuda_module_abi_stamp() {
  return (uint64_t{1} << 48) ^ (sizeof(Analysis) << 36) ^ (sizeof(NodeAnalysis) << 28) ^ (sizeof(MeasureOptions) << 18) ^
         (sizeof(NodeMeasurement) << 8) ^ sizeof(ModelMeasurement) ^ (sizeof(CalibrationResult) << 4) ^
         (sizeof(NodeSpec) << 12) ^ (sizeof(Node) << 40) ^ (sizeof(TensorInfo) << 22) ^
         (sizeof(ServingStepSpec) << 30) ^ (sizeof(ServingStepTiming) << 44);
}

struct CudaModuleApi {
  uint64_t abi_stamp;
  const char* version;  // MODELCOST_VERSION the module was built with
  // Throws Error(kExitRuntime) when no NVIDIA GPU is usable.
  std::unique_ptr<Backend> (*make_backend)(int device);
  // True when a CUDA device is visible.
  bool (*device_available)();
  // Runs one node once on device 0 (tests that check the GPU operators against the CPU reference).
  std::vector<HostTensor> (*run_node)(const NodeSpec& spec, const std::vector<HostTensor>& inputs, bool channels_last);
};

// The C entry point the module exports.
#define MODELCOST_CUDA_MODULE_ENTRY "modelcost_cuda_module_api"
extern "C" const CudaModuleApi* modelcost_cuda_module_api();

// Where the analyzer looks for the module, and what it found (--version).
struct CudaModuleStatus {
  std::string path;     // the module file found, or "" when none
  bool loadable = false;
  std::string problem;  // why it cannot be used: not found (naming where it looked), dlopen error, ABI mismatch
};
// Finds the module without loading it: $MODELCOST_CUDA_MODULE, else the directory of the
// executable (a build tree), else <bindir>/../lib/modelcost (an installed tree).
std::string find_cuda_module();
// Loads the module (once per process); status.loadable false with the reason when it cannot.
CudaModuleStatus cuda_module_status();
// The loaded module's table; throws Error(kExitRuntime, "no NVIDIA GPU support: ...") naming the problem.
const CudaModuleApi& cuda_module();

// Inside the module (src/measure/cuda), and the CUDA tests that link its library directly.
std::unique_ptr<Backend> make_cuda_backend(int device);
bool cuda_device_available();
std::vector<HostTensor> run_node_on_gpu(const NodeSpec& spec, const std::vector<HostTensor>& inputs, bool channels_last);
ServingStepTiming measure_serving_step_on_gpu(const ServingStepSpec& spec);

}  // namespace modelcost
