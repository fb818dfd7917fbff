// Cleans L2 without leaving dirty lines behind: a read-only sweep over a buffer twice the L2 size.
// A write-based flush (memset) would leave dirty lines whose write-back lands in the next kernel's
// DRAM write counters; a device-to-host copy does not evict L2 on Hopper.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace modelcost::cuda {

// Reads `bytes` (a multiple of 16) of `buffer`; `sink` (one device int) keeps the reads alive.
void launch_l2_read_sweep(const void* buffer, size_t bytes, int* sink, cudaStream_t stream);

}  // namespace modelcost::cuda
