// Evicts the L2 cache before a sample (--cold): writes a buffer twice the L2 size, as nvbench's
// l2flush does, so the next kernel's inputs come from DRAM. Enqueued outside the timed region.
#pragma once
#include <cuda_runtime.h>

#include "core/device_buffer.h"

namespace modelcost::cuda {

class L2Flush {
 public:
  explicit L2Flush(size_t l2_bytes) : buffer_(2 * (l2_bytes > 0 ? l2_bytes : (64u << 20))) {}
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer buffer_;
  int value_ = 0;
};

}  // namespace modelcost::cuda
