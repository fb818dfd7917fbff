#include "timing/l2_sweep.h"

namespace modelcost::cuda {
namespace {

__global__ void read_sweep(const int4* data, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int4 v = __ldcg(data + i);  // cache in L2 only, like the kernels whose traffic is measured next
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // practically never: only keeps the loads from being removed
}

}  // namespace

void launch_l2_read_sweep(const void* buffer, size_t bytes, int* sink, cudaStream_t stream) {
  const size_t n = bytes / sizeof(int4);
  read_sweep<<<1024, 256, 0, stream>>>(static_cast<const int4*>(buffer), n, sink);
}

}  // namespace modelcost::cuda
