// The channels-last depthwise kernel that stages its input in shared memory: a block computes an
// output tile (8x8 pixels, or 4x4 where the work is small) of 32 output channels, loading the
// tile's input window (its halo included, as floats) and the 32 filters once; each thread then
// holds one filter tap at a time in a register and applies it to its pixels from shared memory.
// Each input element is read from global memory about once per tile where the direct kernels read
// it once per output that covers it, and converted once. Included by depthwise_kernels.cu only.
#pragma once

namespace modelcost::cuda {

constexpr int kTiledChannels = 32;  // output channels per block: one per lane of a warp
constexpr int kTiledLanes = 8;      // warps per block: pixel lanes
constexpr size_t kTiledSharedLimit = 48 * 1024;

struct DepthwiseTile {
  int h = 8, w = 8;                   // output pixels
  int in_h = 0, in_w = 0;             // the input window they read
  int in_channels = kTiledChannels;   // input channels per block (32 / multiplier)
};

inline DepthwiseTile depthwise_tile(const DepthwiseGeometry& g, int side) {
  DepthwiseTile t;
  t.h = t.w = side;
  t.in_h = (side - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1;
  t.in_w = (side - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1;
  t.in_channels = kTiledChannels / static_cast<int>(g.multiplier);
  return t;
}

inline size_t tiled_shared_bytes(const DepthwiseGeometry& g, const DepthwiseTile& t) {
  return sizeof(float) * (size_t(t.in_h) * t.in_w * t.in_channels + size_t(g.kernel_h) * g.kernel_w * kTiledChannels);
}

// Where kAuto takes the tiled kernel (bench/cuda/depthwise_kernels.cpp on an H100): a channel
// multiplier above 1, or a channel count the direct kernels cannot read in packs of 4 (both read
// their inputs one element at a time there: FastViT's x2 convs, MixNet's 90 channels, 2-6x faster
// tiled), and windows of 5x5 or more over fewer than half a million outputs (batch 1: 1.3-2.6x
// faster); elsewhere the direct kernels' 8- and 16-byte threads run 1.2-2.5x faster than the tiled
// one (GhostNet's 5x5 over 36 channels at batch 32, 0.9 million outputs: 29.0 against 72.7 us).
inline bool tiled_preferred(const DepthwiseGeometry& g) {
  const int64_t outputs = g.batch * g.channels * g.out_h * g.out_w;
  return g.multiplier > 1 || g.channels % 4 != 0 || (g.kernel_h * g.kernel_w >= 25 && outputs < (int64_t(1) << 19));
}

inline bool tiled_applies(const DepthwiseGeometry& g) {
  if (!g.channels_last || g.multiplier < 1 || kTiledChannels % g.multiplier != 0 || g.batch > 65535) return false;
  if ((g.channels + kTiledChannels - 1) / kTiledChannels > 65535) return false;
  if (((g.out_h + 3) / 4) * ((g.out_w + 3) / 4) > (int64_t(1) << 31) - 1) return false;
  return tiled_shared_bytes(g, depthwise_tile(g, 4)) <= kTiledSharedLimit;
}

// Stages the block's input window in shared memory as floats, channels fastest. kVector: every
// pixel's channels load as 16-byte packs (the block's and the tensor's channel counts are
// multiples of the pack); the loads of one pass are all issued before any is stored, so a thread
// waits on memory about once, not once per element.
template <typename T, bool kVector>
__device__ __forceinline__ void stage_window(const T* __restrict__ x, float* xs, const DepthwiseGeometry& g,
                                             const DepthwiseTile& t, int oh0, int ow0, int64_t batch, int64_t ci0) {
  constexpr int kPack = kVector ? 16 / sizeof(T) : 1, kInFlight = 4;
  const int64_t in_channels = g.channels / g.multiplier;
  const int packs_per_pixel = t.in_channels / kPack, total = t.in_h * t.in_w * packs_per_pixel;
  const int stride = blockDim.x;
  for (int first = threadIdx.x; first < total; first += stride * kInFlight) {
    Pack<T, kPack> v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      const int e = first + k * stride;
      const int p = e / packs_per_pixel, ci = (e % packs_per_pixel) * kPack;
      const int ih = oh0 * g.stride_h - g.pad_h + p / t.in_w, iw = ow0 * g.stride_w - g.pad_w + p % t.in_w;
      const bool inside = e < total && ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w && ci0 + ci < in_channels;
#pragma unroll
      for (int q = 0; q < kPack; ++q) v[k].v[q] = from_float<T>(0.f);
      if (inside) v[k] = *reinterpret_cast<const Pack<T, kPack>*>(x + ((batch * g.in_h + ih) * g.in_w + iw) * in_channels + ci0 + ci);
    }
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      const int e = first + k * stride;
      if (e >= total) break;
      if constexpr (kPack % 4 == 0) {  // 16-byte shared stores: a quarter of the bank conflicts
#pragma unroll
        for (int q = 0; q < kPack; q += 4)
          *reinterpret_cast<float4*>(xs + e * kPack + q) =
              make_float4(to_float(v[k].v[q]), to_float(v[k].v[q + 1]), to_float(v[k].v[q + 2]), to_float(v[k].v[q + 3]));
      } else {
#pragma unroll
        for (int q = 0; q < kPack; ++q) xs[e * kPack + q] = to_float(v[k].v[q]);
      }
    }
  }
}

// kPix pixels per thread: the tile's h * w / kTiledLanes.
template <typename T, int kPix, bool kVector, bool kTail>
__global__ void __launch_bounds__(kTiledChannels * kTiledLanes, 4)
depthwise_nhwc_tiled_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                            T* __restrict__ y, DepthwiseGeometry g, DepthwiseTile t) {
  extern __shared__ float shared[];
  float* xs = shared;                                      // [in_h][in_w][in_channels]
  float* ws = shared + t.in_h * t.in_w * t.in_channels;   // [taps][32]
  const int tiles_w = static_cast<int>((g.out_w + t.w - 1) / t.w);
  const int oh0 = static_cast<int>(blockIdx.x / tiles_w) * t.h, ow0 = static_cast<int>(blockIdx.x % tiles_w) * t.w;
  const int64_t c0 = int64_t(blockIdx.y) * kTiledChannels, batch = blockIdx.z;
  const int64_t ci0 = c0 / g.multiplier;
  const int tid = threadIdx.x, taps = g.kernel_h * g.kernel_w;
  stage_window<T, kVector>(x, xs, g, t, oh0, ow0, batch, ci0);
#pragma unroll 4
  for (int e = tid; e < taps * kTiledChannels; e += blockDim.x) {
    const int64_t c = c0 + e % kTiledChannels;
    ws[e] = c < g.channels ? to_float(w[int64_t(e / kTiledChannels) * g.channels + c]) : 0.f;
  }
  __syncthreads();
  const int co = tid % kTiledChannels, lane = tid / kTiledChannels;
  const int64_t c = c0 + co;
  const int ci = static_cast<int>(c / g.multiplier - ci0);
  int base[kPix];
  float acc[kPix];
  const float b = bias && c < g.channels ? to_float(bias[c]) : 0.f;
#pragma unroll
  for (int j = 0; j < kPix; ++j) {
    const int pixel = lane + kTiledLanes * j, py = pixel / t.w, px = pixel % t.w;
    base[j] = ((py * g.stride_h) * t.in_w + px * g.stride_w) * t.in_channels + ci;
    acc[j] = b;
  }
  for (int kh = 0; kh < g.kernel_h; ++kh)
    for (int kw = 0; kw < g.kernel_w; ++kw) {
      const float wv = ws[(kh * g.kernel_w + kw) * kTiledChannels + co];
      const int offset = (kh * g.dilation_h * t.in_w + kw * g.dilation_w) * t.in_channels;
#pragma unroll
      for (int j = 0; j < kPix; ++j) acc[j] += xs[base[j] + offset] * wv;
    }
  if (c >= g.channels) return;
#pragma unroll
  for (int j = 0; j < kPix; ++j) {
    const int pixel = lane + kTiledLanes * j, oh = oh0 + pixel / t.w, ow = ow0 + pixel % t.w;
    if (oh >= g.out_h || ow >= g.out_w) continue;
    const int64_t index = ((batch * g.out_h + oh) * g.out_w + ow) * g.channels + c;
    y[index] = finish<T, kTail>(g.epilogue, acc[j], c, index);
  }
}

// The tile side: 8x8 pixels where that gives every SM two blocks, else 4x4 (batch 1, late stages).
inline int tiled_side(const DepthwiseGeometry& g, int sms) {
  const int64_t chunks = (g.channels + kTiledChannels - 1) / kTiledChannels;
  const int64_t blocks8 = ((g.out_h + 7) / 8) * ((g.out_w + 7) / 8) * chunks * g.batch;
  return blocks8 >= 2 * sms ? 8 : 4;
}

// The geometry's SM count, else the current device's.
inline int depthwise_multiprocessors(const DepthwiseGeometry& g) {
  if (g.multiprocessors > 0) return g.multiprocessors;
  int device = 0, sms = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(1, sms);
}

template <typename T, bool kTail>
void launch_tiled(const DepthwiseGeometry& g, const T* x, const T* w, const T* bias, T* y, cudaStream_t stream) {
  int side = tiled_side(g, depthwise_multiprocessors(g));
  DepthwiseTile t = depthwise_tile(g, side);
  if (tiled_shared_bytes(g, t) > kTiledSharedLimit) t = depthwise_tile(g, side = 4);
  const int64_t tiles = ((g.out_h + t.h - 1) / t.h) * ((g.out_w + t.w - 1) / t.w);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((g.channels + kTiledChannels - 1) / kTiledChannels),
                  static_cast<unsigned>(g.batch));
  const size_t shared = tiled_shared_bytes(g, t);
  constexpr int kPack = 16 / sizeof(T);
  const bool vector = t.in_channels % kPack == 0 && (g.channels / g.multiplier) % kPack == 0;
  const int threads = kTiledChannels * kTiledLanes;
  if (side == 8 && vector) depthwise_nhwc_tiled_kernel<T, 8, true, kTail><<<grid, threads, shared, stream>>>(x, w, bias, y, g, t);
  else if (side == 8) depthwise_nhwc_tiled_kernel<T, 8, false, kTail><<<grid, threads, shared, stream>>>(x, w, bias, y, g, t);
  else if (vector) depthwise_nhwc_tiled_kernel<T, 2, true, kTail><<<grid, threads, shared, stream>>>(x, w, bias, y, g, t);
  else depthwise_nhwc_tiled_kernel<T, 2, false, kTail><<<grid, threads, shared, stream>>>(x, w, bias, y, g, t);
}

}  // namespace modelcost::cuda
