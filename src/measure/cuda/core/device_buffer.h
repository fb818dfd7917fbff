// Owning device allocation (cudaMalloc / cudaFree), 256-byte aligned by the driver.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "core/cuda_check.h"

namespace modelcost::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { resize(bytes); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  // Reallocates (contents lost) when more bytes are needed than held.
  void resize(size_t bytes) {
    if (bytes <= bytes_) return;
    release();
    MC_CUDA_CHECK(cudaMalloc(&data_, bytes));
    bytes_ = bytes;
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace modelcost::cuda
