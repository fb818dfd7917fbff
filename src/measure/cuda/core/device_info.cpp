#include "core/device_info.h"

#include <cudnn.h>
#include <cuda_runtime.h>

#include "core/cuda_check.h"

namespace modelcost::cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" status
    return 0;
  }
  return count;
}

int current_device_multiprocessors() {
  int device = 0, sms = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

bool current_device_has_clusters() {
  int device = 0, major = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

DeviceInfo query_device_info(int device) {
  cudaDeviceProp prop{};
  MC_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo d;
  d.is_gpu = true;
  d.name = prop.name;
  d.compute_capability_major = prop.major;
  d.compute_capability_minor = prop.minor;
  d.multiprocessors = prop.multiProcessorCount;
  d.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  d.l2_bytes = prop.l2CacheSize;
  d.memory_bus_bits = prop.memoryBusWidth;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) d.sm_clock_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) d.memory_clock_mhz = khz / 1000.0;
  cudaGetLastError();
  // DDR: two transfers per clock over the bus.
  d.datasheet_bandwidth_gbps = 2.0 * d.memory_clock_mhz * 1e6 * (d.memory_bus_bits / 8.0) / 1e9;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const size_t cudnn = cudnnGetVersion();
  d.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ", runtime " +
             std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", cuDNN " +
             std::to_string(cudnn / 10000) + "." + std::to_string(cudnn % 10000 / 100) + "." + std::to_string(cudnn % 100);
  return d;
}

}  // namespace modelcost::cuda
