// Name, SM count, clocks, memory and L2 size of a CUDA device, from cudaGetDeviceProperties.
#pragma once
#include "modelcost/measure.h"

namespace modelcost::cuda {

// Number of CUDA devices (0 when the driver is missing or finds none; never throws).
int device_count();
DeviceInfo query_device_info(int device);
// The current device's SM count, which sizes the grids of kernels launched on it.
int current_device_multiprocessors();
// Whether the current device launches thread-block clusters (compute capability 9.0 and up).
bool current_device_has_clusters();

}  // namespace modelcost::cuda
