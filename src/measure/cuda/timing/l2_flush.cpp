#include "timing/l2_flush.h"

namespace modelcost::cuda {

void L2Flush::flush(cudaStream_t stream) {
  // A new value each time, so no part of the hardware can skip the writes as redundant.
  value_ = (value_ + 1) & 0xff;
  MC_CUDA_CHECK(cudaMemsetAsync(buffer_.data(), value_, buffer_.bytes(), stream));
}

}  // namespace modelcost::cuda
