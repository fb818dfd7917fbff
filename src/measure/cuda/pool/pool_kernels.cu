// Max and average pooling over 1-3 spatial dims, NCHW, one thread per output element: the
// windows cuDNN cannot take (asymmetric pads, ceil_mode's last partial window). The window
// bounds are those of the CPU reference: pads bound count_include_pad's divisor, nothing past
// the end pad counts.
#include <cfloat>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {

template <typename T>
__global__ void pool_kernel(const T* __restrict__ x, T* __restrict__ y, PoolGeometry g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i;
    int o[3];
    for (int d = 2; d >= 0; --d) {
      o[d] = static_cast<int>(rest % g.out[d]);
      rest /= g.out[d];
    }
    const T* plane = x + rest * g.in[0] * g.in[1] * g.in[2];
    int begin[3], end[3], limit_end[3];
    for (int d = 0; d < 3; ++d) {
      begin[d] = o[d] * g.stride[d] - g.pad[d];
      limit_end[d] = min(begin[d] + g.kernel[d], g.in[d] + g.pad_end[d]);
      end[d] = min(begin[d] + g.kernel[d], g.in[d]);
    }
    const int padded = (limit_end[0] - begin[0]) * (limit_end[1] - begin[1]) * (limit_end[2] - begin[2]);
    for (int d = 0; d < 3; ++d) begin[d] = max(begin[d], 0);
    float acc = g.max ? -FLT_MAX : 0.f;
    for (int a = begin[0]; a < end[0]; ++a)
      for (int b = begin[1]; b < end[1]; ++b)
        for (int c = begin[2]; c < end[2]; ++c) {
          const float v = to_float(plane[(int64_t(a) * g.in[1] + b) * g.in[2] + c]);
          acc = g.max ? fmaxf(acc, v) : acc + v;
        }
    if (!g.max) {
      const int count = (end[0] - begin[0]) * (end[1] - begin[1]) * (end[2] - begin[2]);
      acc /= static_cast<float>(g.count_include_pad ? padded : max(count, 1));
    }
    y[i] = from_float<T>(acc);
  }
}

void launch_pool(ElementType type, const PoolGeometry& g, const void* x, void* y, cudaStream_t stream) {
  const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
  if (n == 0) return;
  const int grid = grid_for(n) > 132 * 32 ? 132 * 32 : grid_for(n);
  MC_DISPATCH_TYPE(type, pool_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g, n));
  MC_CUDA_CHECK_LAUNCH();
}

PoolGeometry pool_geometry(const PoolParams& p, const Shape& x, const Shape& y) {
  PoolGeometry g;
  const size_t n = p.kernel.size();
  g.planes = x[0] * x[1];
  g.max = p.max;
  g.count_include_pad = p.count_include_pad;
  for (size_t i = 0; i < n; ++i) {  // spatial dims right-aligned in the 3 slots
    const size_t d = 3 - n + i;
    g.in[d] = static_cast<int>(x[2 + i]);
    g.out[d] = static_cast<int>(y[2 + i]);
    g.kernel[d] = static_cast<int>(p.kernel[i]);
    g.stride[d] = static_cast<int>(p.strides[i]);
    g.pad[d] = static_cast<int>(p.pads[i]);
    g.pad_end[d] = static_cast<int>(p.pads[n + i]);
  }
  return g;
}

}  // namespace modelcost::cuda
