// NonZero at the analyzer's output size: a flag per element, CUB's exclusive scan of the flags
// (each non-zero element's column), then every element writes its coordinates to its column and
// the columns past the count are zeroed. No host synchronisation (PyTorch reads the count back to
// size its output), so the node can be captured in a CUDA graph; its output is always
// [rank, capacity], the bound downstream nodes were shaped with.
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

constexpr int kMaxRank = 8;

struct Dims {
  int rank = 0;
  int64_t size[kMaxRank] = {};
};

// Non-zero of an element of `bytes` bytes; float sign bits ignored so that -0.0 reads zero.
__device__ bool nonzero(const unsigned char* x, int64_t i, int bytes, bool is_float) {
  switch (bytes) {
    case 1: return x[i] != 0;
    case 2: return (reinterpret_cast<const uint16_t*>(x)[i] & (is_float ? 0x7fffu : 0xffffu)) != 0;
    case 4: return (reinterpret_cast<const uint32_t*>(x)[i] & (is_float ? 0x7fffffffu : 0xffffffffu)) != 0;
    default: return (reinterpret_cast<const uint64_t*>(x)[i] & (is_float ? 0x7fffffffffffffffull : ~0ull)) != 0;
  }
}

__global__ void flag_nonzero(const unsigned char* x, int64_t n, int bytes, bool is_float, int* flags) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    flags[i] = nonzero(x, i, bytes, is_float) ? 1 : 0;
}

// Element i writes its coordinates to column column[i] when flagged; columns from the count on are 0.
__global__ void write_coordinates(const int* flags, const int* column, int64_t n, Dims dims, int64_t capacity, int64_t* y) {
  const int64_t count = n > 0 ? column[n - 1] + flags[n - 1] : 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n || i < capacity; i += int64_t(gridDim.x) * blockDim.x) {
    if (i < n && flags[i] && column[i] < capacity) {
      int64_t rest = i;
      for (int d = dims.rank - 1; d >= 0; --d) {
        y[d * capacity + column[i]] = rest % dims.size[d];
        rest /= dims.size[d];
      }
    }
    if (i >= count && i < capacity)
      for (int d = 0; d < dims.rank; ++d) y[d * capacity + i] = 0;
  }
}

class NonZeroRunner : public OperatorRunner {
 public:
  NonZeroRunner(const NonZeroPlan& plan, int32_t dtype) : p_(plan), dtype_(dtype) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext&) override {
    x_ = in[0].data;
    y_ = static_cast<int64_t*>(out[0].data);
    n_ = static_cast<int64_t>(element_count(p_.dims));
    flags_.resize(static_cast<size_t>(n_ + 1) * sizeof(int));
    column_.resize(static_cast<size_t>(n_ + 1) * sizeof(int));
    MC_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, static_cast<int*>(flags_.data()),
                                                static_cast<int*>(column_.data()), static_cast<int>(n_)));
    temp_.resize(std::max<size_t>(temp_bytes_, 16));
    dims_.rank = static_cast<int>(p_.dims.size());
    for (int d = 0; d < dims_.rank; ++d) dims_.size[d] = p_.dims[static_cast<size_t>(d)];
  }

  void launch(cudaStream_t s) override {
    const bool is_float = dtype_ == 1 || dtype_ == 10 || dtype_ == 16 || dtype_ == 11;
    int* flags = static_cast<int*>(flags_.data());
    int* column = static_cast<int*>(column_.data());
    flag_nonzero<<<grid_for(n_), kThreads, 0, s>>>(static_cast<const unsigned char*>(x_), n_,
                                                   static_cast<int>(dtype_size(dtype_)), is_float, flags);
    MC_CUDA_CHECK_LAUNCH();
    size_t bytes = temp_bytes_;
    MC_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, flags, column, static_cast<int>(n_), s));
    write_coordinates<<<grid_for(std::max(n_, p_.capacity)), kThreads, 0, s>>>(flags, column, n_, dims_, p_.capacity, y_);
    MC_CUDA_CHECK_LAUNCH();
  }

  std::string implementation() const override { return "own NonZero: flags, cub scan, coordinates (output at the analyzer's bound)"; }

 private:
  NonZeroPlan p_;
  int32_t dtype_;
  const void* x_ = nullptr;
  int64_t* y_ = nullptr;
  int64_t n_ = 0;
  Dims dims_;
  DeviceBuffer flags_, column_, temp_;
  size_t temp_bytes_ = 0;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_nonzero_runner(const NodeSpec& spec, const NonZeroPlan& plan, std::string* reason) {
  const double bytes = dtype_size(spec.inputs[0].dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return *reason = std::string("NonZero of ") + dtype_name(spec.inputs[0].dtype), nullptr;
  if (plan.dims.size() > static_cast<size_t>(kMaxRank)) return *reason = "NonZero of rank above 8", nullptr;
  return std::make_unique<NonZeroRunner>(plan, spec.inputs[0].dtype);
}

}  // namespace modelcost::cuda
