// Division by a run-time constant through a multiply and a shift (Granlund-Montgomery, as
// PyTorch's IntDivider): the index arithmetic of strided kernels. A 64-bit integer division is
// a ~70-instruction software routine on the GPU and made broadcast and copy kernels
// instruction-bound; kernels use these 32-bit dividers whenever every index fits in 31 bits.
#pragma once
#include <cstdint>

namespace modelcost::cuda {

struct FastDivider {
  uint32_t divisor = 1, multiplier = 0, shift = 0;
  FastDivider() = default;
  explicit FastDivider(uint32_t d) : divisor(d) {
    for (shift = 0; shift < 32; ++shift)
      if ((uint64_t(1) << shift) >= d) break;
    const uint64_t one = 1;
    multiplier = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  // Valid for n < 2^31.
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, multiplier) + n) >> shift; }
};

// True when every element index and offset of a kernel stays below 2^31.
inline bool fits_int32(int64_t extent) { return extent >= 0 && extent < (int64_t(1) << 31); }

}  // namespace modelcost::cuda
