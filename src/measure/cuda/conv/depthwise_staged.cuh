// The channels-last depthwise kernel, register-blocked: a block stages its input window in
// shared memory in the tensor's own type by asynchronous copies, then each thread computes a
// 4 x 4 block of outputs (1 x 4 where the work is small) for one pair of channels. Each input
// pair of the thread's window is read from shared memory and converted once per kernel row for
// the 4 outputs of a row that use it, and each filter row once for the 16 outputs, so the FMAs
// are most of what the SMs issue (a 7x7 window: 1568 FMAs to 329 loads and 560 conversions a
// thread). The direct row kernels compute 4 outputs of 8 channels a thread and read their window
// from L1/L2 once per 4 outputs: on an H200 they ran ConvMixer's and ConvNeXt's 7x7 windows at
// about 13% of the FP32 FMA peak, and PVT-v2's 3x3 at about a fifth of the DRAM bandwidth. Stride 1 or 2, no dilation, a
// multiplier of 1 and channels in whole 16-byte packs, 2-byte types; the plan
// (depthwise_staged_plan.h) picks the tile. Included by depthwise_kernels.cu only.
#pragma once
#include "conv/depthwise_staged_plan.h"

namespace modelcost::cuda {

// Stages the block's input window ([in_h][in_w][pairs] pairs of T, zeros outside the image and
// past the channels) by asynchronous 16-byte copies, all in flight at once, and its filters
// ([taps][pairs] float2) while they land.
template <typename T>
__device__ __forceinline__ void stage_staged_window(const T* __restrict__ x, const T* __restrict__ w, Pack<T, 2>* xs, float2* ws,
                                                    const DepthwiseGeometry& g, const StagedTile& t, int ih0, int iw0,
                                                    int64_t batch, int64_t pair0, int valid_pairs) {
  constexpr int kPairsPerCopy = 16 / (2 * sizeof(T));
  const int copies_per_pixel = t.pairs / kPairsPerCopy, total = t.in_h * t.in_w * copies_per_pixel;
  for (int e = threadIdx.x; e < total; e += blockDim.x) {
    const int p = (e % copies_per_pixel) * kPairsPerCopy, pixel = e / copies_per_pixel;
    const int ih = ih0 + pixel / t.in_w, iw = iw0 + pixel % t.in_w;
    const bool inside = p < valid_pairs && ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w;
    const T* src = inside ? x + ((batch * g.in_h + ih) * g.in_w + iw) * g.channels + (pair0 + p) * 2 : x;
    copy_async16(xs + pixel * t.pairs + p, src, inside);
  }
  commit_copies();
  const int taps = g.kernel_h * g.kernel_w;
  for (int e = threadIdx.x; e < taps * t.pairs; e += blockDim.x) {
    const int p = e % t.pairs;
    const T* filter = w + int64_t(e / t.pairs) * g.channels + (pair0 + p) * 2;
    ws[e] = p < valid_pairs ? make_float2(to_float(filter[0]), to_float(filter[1])) : make_float2(0.f, 0.f);
  }
  wait_copies<0>();
}

// Grid: (output tiles, channel chunks, batch). Thread: channel pair (fastest), then its R x 4
// output block in the tile.
template <typename T, int KW, int S, int R, bool kTail>
__global__ void __launch_bounds__(kStagedMaxThreads) depthwise_nhwc_staged_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias, T* __restrict__ y, DepthwiseGeometry g,
    StagedTile t) {
  constexpr int C = kStagedCols, kSpan = (C - 1) * S + KW;  // input pairs a row of 4 outputs reads per kernel row
  extern __shared__ __align__(16) unsigned char staged_shared[];
  auto* xs = reinterpret_cast<Pack<T, 2>*>(staged_shared);
  auto* ws = reinterpret_cast<float2*>(staged_shared + size_t(t.in_h) * t.in_w * t.pairs * sizeof(Pack<T, 2>));
  const int tiles_w = static_cast<int>((g.out_w + t.cols - 1) / t.cols);
  const int oh0 = static_cast<int>(blockIdx.x / tiles_w) * t.rows, ow0 = static_cast<int>(blockIdx.x % tiles_w) * t.cols;
  const int64_t pair0 = int64_t(blockIdx.y) * t.pairs, batch = blockIdx.z;
  const int64_t pairs_left = g.channels / 2 - pair0;
  const int valid_pairs = static_cast<int>(pairs_left < t.pairs ? pairs_left : t.pairs);
  stage_staged_window<T>(x, w, xs, ws, g, t, oh0 * S - g.pad_h, ow0 * S - g.pad_w, batch, pair0, valid_pairs);
  __syncthreads();
  const int p = threadIdx.x % t.pairs, block = threadIdx.x / t.pairs;
  const int r0 = (block / t.threads_per_row()) * R, c0 = (block % t.threads_per_row()) * C;  // in the tile
  if (p >= valid_pairs || oh0 + r0 >= g.out_h || ow0 + c0 >= g.out_w) return;
  const int64_t c = (pair0 + p) * 2;
  float2 acc[R][C];
  const float2 b = bias ? make_float2(to_float(bias[c]), to_float(bias[c + 1])) : make_float2(0.f, 0.f);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int o = 0; o < C; ++o) acc[r][o] = b;
  for (int kh = 0; kh < g.kernel_h; ++kh) {
    float2 wrow[KW];
#pragma unroll
    for (int kw = 0; kw < KW; ++kw) wrow[kw] = ws[(kh * KW + kw) * t.pairs + p];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const Pack<T, 2>* row = xs + ((r0 + r) * S + kh) * t.in_w * t.pairs + c0 * S * t.pairs + p;
#pragma unroll
      for (int j = 0; j < kSpan; ++j) {
        const Pack<T, 2> v = row[j * t.pairs];
        const float2 xv = make_float2(to_float(v.v[0]), to_float(v.v[1]));
#pragma unroll
        for (int o = 0; o < C; ++o) {
          const int kw = j - o * S;  // a compile-time index once unrolled
          if (kw < 0 || kw >= KW) continue;
          acc[r][o].x += xv.x * wrow[kw].x;
          acc[r][o].y += xv.y * wrow[kw].y;
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int oh = oh0 + r0 + r;
    if (oh >= g.out_h) break;
#pragma unroll
    for (int o = 0; o < C; ++o) {
      const int ow = ow0 + c0 + o;
      if (ow >= g.out_w) break;
      const int64_t at = ((batch * g.out_h + oh) * g.out_w + ow) * g.channels + c;
      Pack<T, 2> v;
      v.v[0] = finish<T, kTail>(g.epilogue, acc[r][o].x, c, at);
      v.v[1] = finish<T, kTail>(g.epilogue, acc[r][o].y, c + 1, at + 1);
      *reinterpret_cast<Pack<T, 2>*>(y + at) = v;
    }
  }
}

template <typename T, bool kTail>
void launch_staged(const DepthwiseGeometry& g, int sms, const T* x, const T* w, const T* bias, T* y, cudaStream_t stream) {
  const StagedTile t = staged_tile(g, sizeof(T), sms);
  const dim3 grid(static_cast<unsigned>(staged_tiles(g, t)), static_cast<unsigned>(staged_chunks(g, t)),
                  static_cast<unsigned>(g.batch));
  const size_t shared = staged_shared_bytes(g, t, sizeof(T));
#define MC_STAGED_CASE(KW, S)                                                                                                \
  if (g.kernel_w == KW && g.stride_w == S) {                                                                                 \
    if (t.thread_rows == 4)                                                                                                  \
      return depthwise_nhwc_staged_kernel<T, KW, S, 4, kTail><<<grid, t.threads(), shared, stream>>>(x, w, bias, y, g, t); \
    return depthwise_nhwc_staged_kernel<T, KW, S, 1, kTail><<<grid, t.threads(), shared, stream>>>(x, w, bias, y, g, t);   \
  }
  MC_STAGED_CASE(3, 1) MC_STAGED_CASE(3, 2) MC_STAGED_CASE(5, 1) MC_STAGED_CASE(5, 2) MC_STAGED_CASE(7, 1)
  MC_STAGED_CASE(7, 2) MC_STAGED_CASE(9, 1) MC_STAGED_CASE(9, 2)
#undef MC_STAGED_CASE
}

}  // namespace modelcost::cuda
