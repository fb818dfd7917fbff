// Pieces of one device allocation: a step's weights or activations are laid out first (offsets
// 256-byte aligned, taken in order), allocated once, then addressed by their offsets.
#pragma once
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "core/device_buffer.h"

namespace modelcost::cuda {

class BufferCarver {
 public:
  // The offset of the next `elements` elements of `element_bytes` each (fp16 by default).
  size_t take(int64_t elements, size_t element_bytes = 2) {
    const size_t at = used_;
    used_ += (static_cast<size_t>(elements) * element_bytes + 255) / 256 * 256;
    return at;
  }
  size_t used() const { return used_; }

 private:
  size_t used_ = 0;
};

// The piece of `buffer` at `offset`, typed.
template <typename T = __half>
T* carved(const DeviceBuffer& buffer, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(buffer.data()) + offset);
}

}  // namespace modelcost::cuda
