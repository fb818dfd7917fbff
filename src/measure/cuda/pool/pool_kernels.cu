// Max and average pooling over 1-3 spatial dims, any pads and ceil_mode. NCHW: one thread per
// output element. Channels-last (2-D windows): a thread takes 8 adjacent channels of one output
// pixel with 16-byte loads, so a warp reads whole pixels; cuDNN's channels-last average pooling
// runs far below the memory rate (170 GB/s on an H100 for PoolFormer's 3x3 token mixer). The
// window bounds are those of the CPU reference: pads bound count_include_pad's divisor, nothing
// past the end pad counts.
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

// Window rows [begin, end) of output o in one dim, and the padded extent count_include_pad divides by.
struct WindowSpan {
  int begin, end, padded;
};
__device__ __forceinline__ WindowSpan window_span(const PoolGeometry& g, int d, int o) {
  const int begin = o * g.stride[d] - g.pad[d];
  const int padded = min(begin + g.kernel[d], g.in[d] + g.pad_end[d]) - begin;
  return {max(begin, 0), min(begin + g.kernel[d], g.in[d]), padded};
}

template <typename T, int W>
__global__ void pool_nhwc_kernel(const T* __restrict__ x, T* __restrict__ y, PoolGeometry g, int64_t n) {
  const int64_t vectors = g.channels / W;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i % vectors) * W;
    int64_t rest = i / vectors;
    const int ow = static_cast<int>(rest % g.out[2]);
    rest /= g.out[2];
    const int oh = static_cast<int>(rest % g.out[1]);
    const int64_t batch = rest / g.out[1];
    const WindowSpan h = window_span(g, 1, oh), w = window_span(g, 2, ow);
    float acc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) acc[k] = g.max ? -FLT_MAX : 0.f;
    for (int a = h.begin; a < h.end; ++a)
      for (int b = w.begin; b < w.end; ++b) {
        const auto v = *reinterpret_cast<const Pack<T, W>*>(x + ((batch * g.in[1] + a) * g.in[2] + b) * g.channels + c);
#pragma unroll
        for (int k = 0; k < W; ++k) acc[k] = g.max ? fmaxf(acc[k], to_float(v.v[k])) : acc[k] + to_float(v.v[k]);
      }
    const float divisor = g.count_include_pad ? h.padded * w.padded : max((h.end - h.begin) * (w.end - w.begin), 1);
    Pack<T, W> out;
#pragma unroll
    for (int k = 0; k < W; ++k) out.v[k] = from_float<T>(g.max ? acc[k] : acc[k] / divisor);
    *reinterpret_cast<Pack<T, W>*>(y + i * W) = out;
  }
}

template <typename T>
void launch_pool_nhwc(const PoolGeometry& g, const void* x, void* y, cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  const bool wide = g.channels % kWide == 0;
  const int64_t n = g.planes / g.channels * g.out[1] * g.out[2] * (wide ? g.channels / kWide : g.channels);
  const int grid = grid_for(n) > 132 * 32 ? 132 * 32 : grid_for(n);
  if (wide)
    pool_nhwc_kernel<T, kWide><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g, n);
  else
    pool_nhwc_kernel<T, 1><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g, n);
}

void launch_pool(ElementType type, const PoolGeometry& g, const void* x, void* y, cudaStream_t stream) {
  const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
  if (n == 0) return;
  if (g.channels_last) {
    MC_DISPATCH_TYPE(type, launch_pool_nhwc<T>(g, x, y, stream));
  } else {
    const int grid = grid_for(n) > 132 * 32 ? 132 * 32 : grid_for(n);
    MC_DISPATCH_TYPE(type, pool_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g, n));
  }
  MC_CUDA_CHECK_LAUNCH();
}

PoolGeometry pool_geometry(const PoolParams& p, const Shape& x, const Shape& y) {
  PoolGeometry g;
  const size_t n = p.kernel.size();
  g.planes = x[0] * x[1];
  g.channels = x[1];
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
