// Direct depthwise 2-D convolution (groups == channels, one filter per channel). Channels-last:
// one thread per output pixel and 8 channels, 16-byte loads of input and of weights laid out
// [KH, KW, C] (adjacent threads read adjacent channels); NCHW: one thread per output element.
// Accumulates in float.
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/element_types.cuh"
#include "measure/cuda/kernels.h"

namespace modelcost::cuda {

template <typename T, int W>
struct alignas(sizeof(T) * W) Pack {
  T v[W];
};

// Channels-last; W channels per thread (8 for 2-byte types, 4 for float; 1 when C is not a
// multiple of that).
template <typename T, int W>
__global__ void depthwise_nhwc_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                      T* __restrict__ y, DepthwiseGeometry g, int64_t n) {
  const int64_t groups = g.channels / W;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i % groups) * W;
    int64_t rest = i / groups;
    const int64_t ow = rest % g.out_w;
    rest /= g.out_w;
    const int64_t oh = rest % g.out_h, batch = rest / g.out_h;
    float acc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) acc[k] = bias ? to_float(bias[c + k]) : 0.f;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) continue;
        const auto xv = *reinterpret_cast<const Pack<T, W>*>(x + ((batch * g.in_h + ih) * g.in_w + iw) * g.channels + c);
        const auto wv = *reinterpret_cast<const Pack<T, W>*>(w + (kh * g.kernel_w + kw) * g.channels + c);
#pragma unroll
        for (int k = 0; k < W; ++k) acc[k] += to_float(xv.v[k]) * to_float(wv.v[k]);
      }
    }
    Pack<T, W> out;
#pragma unroll
    for (int k = 0; k < W; ++k) out.v[k] = from_float<T>(acc[k]);
    *reinterpret_cast<Pack<T, W>*>(y + i * W) = out;
  }
}

// NCHW, weights [C, KH, KW] as ONNX has them.
template <typename T>
__global__ void depthwise_nchw_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                      T* __restrict__ y, DepthwiseGeometry g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = i % g.out_w;
    int64_t rest = i / g.out_w;
    const int64_t oh = rest % g.out_h;
    rest /= g.out_h;  // batch * channels + c
    const int64_t c = rest % g.channels;
    const T* plane = x + rest * g.in_h * g.in_w;
    const T* filter = w + c * g.kernel_h * g.kernel_w;
    float acc = bias ? to_float(bias[c]) : 0.f;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
        if (iw >= 0 && iw < g.in_w) acc += to_float(plane[ih * g.in_w + iw]) * to_float(filter[kh * g.kernel_w + kw]);
      }
    }
    y[i] = from_float<T>(acc);
  }
}

namespace {
int grid_of(int64_t work) { return grid_for(work) > 132 * 32 ? 132 * 32 : grid_for(work); }
}  // namespace

void launch_depthwise_conv(ElementType type, bool channels_last, const DepthwiseGeometry& g, const void* x, const void* w,
                           const void* bias, void* y, cudaStream_t stream) {
  const int64_t outputs = g.batch * g.channels * g.out_h * g.out_w;
  if (outputs == 0) return;
  MC_DISPATCH_TYPE(type, {
    const T* px = static_cast<const T*>(x);
    const T* pw = static_cast<const T*>(w);
    const T* pb = static_cast<const T*>(bias);
    T* py = static_cast<T*>(y);
    constexpr int kWide = 16 / sizeof(T);
    if (!channels_last)
      depthwise_nchw_kernel<T><<<grid_of(outputs), kThreads, 0, stream>>>(px, pw, pb, py, g, outputs);
    else if (g.channels % kWide == 0)
      depthwise_nhwc_kernel<T, kWide><<<grid_of(outputs / kWide), kThreads, 0, stream>>>(px, pw, pb, py, g, outputs / kWide);
    else
      depthwise_nhwc_kernel<T, 1><<<grid_of(outputs), kThreads, 0, stream>>>(px, pw, pb, py, g, outputs);
  });
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
