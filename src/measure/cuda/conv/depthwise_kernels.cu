// Depthwise 2-D convolution (groups == input channels, `multiplier` filters per input channel; the
// row kernels take a multiplier of 1). Channels-last takes the tiled kernel (depthwise_tiled.cuh)
// where it runs faster (tiled_preferred) unless the geometry names an algorithm (the runner times
// each of depthwise_algorithms); the direct kernels follow. Channels-last: a thread
// computes 8 channels (16-byte loads of input and of weights laid out [KH, KW, C], so adjacent
// threads read adjacent channels); NCHW: one plane. Common windows (3, 5 or 7 wide at stride 1
// or 2, ConvMixer's 9 wide at stride 1; channels-last ones also dilated at stride 1, as the
// segmentation backbones' last stages are) take the row kernels: a thread computes kTile outputs
// of a row that read overlapping inputs and reads each input pixel of a kernel row once,
// (kTile-1)*S + KW loads where one output per thread takes kTile*KW, with the row's weights held
// in registers as floats. Other windows take the one-output kernels. The staged kernel
// (depthwise_staged.cuh) computes register blocks of outputs from a shared-memory window; the
// runner times it beside the others. Accumulates in float.
#include <algorithm>

#include "core/cuda_check.h"
#include "core/device_math.cuh"
#include "core/element_types.cuh"
#include "core/kernels.h"
#include "core/tensor_core.cuh"

namespace modelcost::cuda {

bool depthwise_activation_supported(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::kIdentity: case ElementwiseOp::kRelu: case ElementwiseOp::kClip: case ElementwiseOp::kSigmoid:
    case ElementwiseOp::kSilu: case ElementwiseOp::kHardSwish: case ElementwiseOp::kHardSigmoid:
    case ElementwiseOp::kLeakyRelu: case ElementwiseOp::kGelu: return true;
    default: return false;
  }
}

// The epilogue activation, each case a constant op so only its expression is compiled in.
__device__ __forceinline__ float activate(const DepthwiseEpilogue& e, float v) {
#define MC_ACTIVATION_CASE(op) \
  case ElementwiseOp::op: return evaluate_elementwise(ElementwiseOp::op, v, 0.f, 0.f, e.alpha, e.beta);
  switch (e.activation) {
    MC_ACTIVATION_CASE(kRelu) MC_ACTIVATION_CASE(kClip) MC_ACTIVATION_CASE(kSigmoid) MC_ACTIVATION_CASE(kSilu)
    MC_ACTIVATION_CASE(kHardSwish) MC_ACTIVATION_CASE(kHardSigmoid) MC_ACTIVATION_CASE(kLeakyRelu) MC_ACTIVATION_CASE(kGelu)
    default: return v;
  }
#undef MC_ACTIVATION_CASE
}

// The whole epilogue of the output at `index` (in y's layout) of channel c. kTail: the kernel
// was compiled for a scale and shift or a residual after the activation, so the plain store
// compiles as it did before the tail existed.
template <typename T, bool kTail>
__device__ __forceinline__ T finish(const DepthwiseEpilogue& e, float v, int64_t c, int64_t index) {
  v = activate(e, v);
  if (kTail && e.scale) v = v * e.scale[c] + e.shift[c];
  if (kTail && e.residual) v += to_float(static_cast<const T*>(e.residual)[index]);
  return from_float<T>(v);
}

}  // namespace modelcost::cuda

#include "conv/depthwise_staged.cuh"
#include "conv/depthwise_tiled.cuh"

namespace modelcost::cuda {

bool depthwise_tiled_supported(const DepthwiseGeometry& g) { return tiled_applies(g); }

// Channels-last; W channels per thread (16 bytes: 8 for 2-byte types, 4 for float; 4 or 1 when C
// is not a multiple of that; 2 for the small-work form).
template <typename T, int W, bool kTail>
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
        const auto wv = *reinterpret_cast<const Pack<T, W>*>(w + (kh * g.kernel_w + kw) * g.channels + c);
        const T* pixel = x + ((batch * g.in_h + ih) * g.in_w + iw) * (g.channels / g.multiplier);
        if (g.multiplier == 1) {
          const auto xv = *reinterpret_cast<const Pack<T, W>*>(pixel + c);
#pragma unroll
          for (int k = 0; k < W; ++k) acc[k] += to_float(xv.v[k]) * to_float(wv.v[k]);
        } else {
#pragma unroll
          for (int k = 0; k < W; ++k) acc[k] += to_float(pixel[(c + k) / g.multiplier]) * to_float(wv.v[k]);
        }
      }
    }
    Pack<T, W> out;
#pragma unroll
    for (int k = 0; k < W; ++k) out.v[k] = finish<T, kTail>(g.epilogue, acc[k], c + k, i * W + k);
    *reinterpret_cast<Pack<T, W>*>(y + i * W) = out;
  }
}

// NCHW, weights [C, KH, KW] as ONNX has them.
template <typename T, bool kTail>
__global__ void depthwise_nchw_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                      T* __restrict__ y, DepthwiseGeometry g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = i % g.out_w;
    int64_t rest = i / g.out_w;
    const int64_t oh = rest % g.out_h;
    rest /= g.out_h;  // batch * channels + c
    const int64_t c = rest % g.channels, batch = rest / g.channels;
    const T* plane = x + (batch * (g.channels / g.multiplier) + c / g.multiplier) * g.in_h * g.in_w;
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
    y[i] = finish<T, kTail>(g.epilogue, acc, c, i);
  }
}

constexpr int kTile = 4;  // adjacent outputs of a row per thread

// The row kernels' tiles along a row of out_w outputs. A dilated window (stride 1) takes outputs
// `dilation` apart, phase + dilation * (m0 + t), so a tile's outputs share their inputs as an
// undilated window's adjacent outputs do: input j of the tile is column phase + dilation * (m0 + j).
struct RowTiles {
  int dilation, per_phase;
  __host__ __device__ RowTiles(int64_t out_w, int d)
      : dilation(d), per_phase(static_cast<int>(((out_w + d - 1) / d + kTile - 1) / kTile)) {}
  __host__ __device__ int count() const { return dilation * per_phase; }
};

// Blocks of the row kernel each SM must hold at once. Its loads wait on L2 with only a few warps
// to hide them (Nsight Compute on the H100: 25% occupancy at 92-102 registers, 39% of the stalls
// on loads); capping a 3-wide window's registers at 80 fits three blocks, 15-25% faster
// (bench/cuda/depthwise_kernels); wider windows spill at that cap and run slower.
constexpr int row_kernel_min_blocks(int kw) { return kw <= 3 ? 3 : 1; }

// Channels-last row kernel: W channels, KW-wide window, stride S along the row (any dilation at S = 1).
template <typename T, int W, int KW, int S, bool kTail>
__global__ void __launch_bounds__(kThreads, row_kernel_min_blocks(KW))
    depthwise_nhwc_row_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias, T* __restrict__ y,
                              DepthwiseGeometry g, int64_t n) {
  constexpr int kSpan = (kTile - 1) * S + KW;  // input pixels a tile's outputs read per kernel row
  const int groups = static_cast<int>(g.channels / W);
  const RowTiles row_tiles(g.out_w, S == 1 ? g.dilation_w : 1);
  const int tiles = row_tiles.count(), d = row_tiles.dilation;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(i % groups) * W;
    int64_t rest = i / groups;
    const int tile = static_cast<int>(rest % tiles), phase = tile % d, m0 = (tile / d) * kTile;
    rest /= tiles;
    const int oh = static_cast<int>(rest % g.out_h);
    const int64_t batch = rest / g.out_h;
    float acc[kTile][W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const float b = bias ? to_float(bias[c + k]) : 0.f;
#pragma unroll
      for (int t = 0; t < kTile; ++t) acc[t][k] = b;
    }
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      float wf[KW][W];
#pragma unroll
      for (int kw = 0; kw < KW; ++kw) {
        const auto wv = *reinterpret_cast<const Pack<T, W>*>(w + (kh * KW + kw) * g.channels + c);
#pragma unroll
        for (int k = 0; k < W; ++k) wf[kw][k] = to_float(wv.v[k]);
      }
      const T* row = x + (batch * g.in_h + ih) * g.in_w * g.channels + c;
      const int iw0 = (phase + d * m0) * S - g.pad_w;
#pragma unroll
      for (int j = 0; j < kSpan; ++j) {
        const int iw = iw0 + d * j;
        if (iw < 0 || iw >= g.in_w) continue;
        const auto xv = *reinterpret_cast<const Pack<T, W>*>(row + int64_t(iw) * g.channels);
#pragma unroll
        for (int t = 0; t < kTile; ++t) {
          const int kw = j - t * S;  // a compile-time index once unrolled
          if (kw < 0 || kw >= KW) continue;
#pragma unroll
          for (int k = 0; k < W; ++k) acc[t][k] += to_float(xv.v[k]) * wf[kw][k];
        }
      }
    }
    const int64_t first = ((batch * g.out_h + oh) * g.out_w + phase + d * m0) * g.channels + c;
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      if (phase + d * (m0 + t) >= g.out_w) break;
      const int64_t at = first + int64_t(d) * t * g.channels;
      Pack<T, W> v;
#pragma unroll
      for (int k = 0; k < W; ++k) v.v[k] = finish<T, kTail>(g.epilogue, acc[t][k], c + k, at + k);
      *reinterpret_cast<Pack<T, W>*>(y + at) = v;
    }
  }
}

// NCHW row kernel: a thread computes kTile adjacent outputs of one plane's row.
template <typename T, int KW, int S, bool kTail>
__global__ void depthwise_nchw_row_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                          T* __restrict__ y, DepthwiseGeometry g, int64_t n) {
  constexpr int kSpan = (kTile - 1) * S + KW;
  const int tiles = static_cast<int>((g.out_w + kTile - 1) / kTile);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int ow0 = static_cast<int>(i % tiles) * kTile;
    int64_t rest = i / tiles;
    const int oh = static_cast<int>(rest % g.out_h);
    rest /= g.out_h;  // batch * channels + c
    const int64_t c = rest % g.channels;
    const T* plane = x + rest * g.in_h * g.in_w;
    const float b = bias ? to_float(bias[c]) : 0.f;
    float acc[kTile];
#pragma unroll
    for (int t = 0; t < kTile; ++t) acc[t] = b;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      float wf[KW];
#pragma unroll
      for (int kw = 0; kw < KW; ++kw) wf[kw] = to_float(w[(c * g.kernel_h + kh) * KW + kw]);
      const T* row = plane + int64_t(ih) * g.in_w;
      const int iw0 = ow0 * S - g.pad_w;
#pragma unroll
      for (int j = 0; j < kSpan; ++j) {
        const int iw = iw0 + j;
        if (iw < 0 || iw >= g.in_w) continue;
        const float xv = to_float(row[iw]);
#pragma unroll
        for (int t = 0; t < kTile; ++t) {
          const int kw = j - t * S;
          if (kw >= 0 && kw < KW) acc[t] += xv * wf[kw];
        }
      }
    }
    const int64_t first = (rest * g.out_h + oh) * g.out_w + ow0;
#pragma unroll
    for (int t = 0; t < kTile; ++t)
      if (ow0 + t < g.out_w) y[first + t] = finish<T, kTail>(g.epilogue, acc[t], c, first + t);
  }
}

namespace {
// Grid-stride kernels: at most 32 blocks per SM; work of fewer than 64 threads per SM is small.
int grid_of(int64_t work, int sms) { return std::min(grid_for(work), 32 * sms); }
bool small_work(int64_t threads, int sms) { return threads < int64_t(64) * sms; }
}  // namespace

// Whether a row kernel is compiled for the window's width, stride and dilation (launch_row_kernel's cases).
bool row_kernel_exists(bool channels_last, const DepthwiseGeometry& g) {
  if (g.stride_w != 1 && g.stride_w != 2) return false;
  if (g.dilation_w != 1 && (!channels_last || g.stride_w != 1)) return false;  // dilated rows: channels-last, stride 1
  return g.kernel_w == 3 || g.kernel_w == 5 || g.kernel_w == 7 || (g.kernel_w == 9 && g.stride_w == 1);
}

// Launches the row kernel of the window's width and stride; false when the window has none.
template <typename T, int W, bool kTail>
bool launch_row_kernel(bool channels_last, const DepthwiseGeometry& g, int sms, const T* x, const T* w, const T* bias, T* y,
                       cudaStream_t stream) {
  if (!row_kernel_exists(channels_last, g)) return false;
  const int64_t threads = g.batch * g.out_h * RowTiles(g.out_w, g.stride_w == 1 ? g.dilation_w : 1).count() *
                          (channels_last ? g.channels / W : g.channels);
  const int grid = grid_of(threads, sms);
#define MC_ROW_CASE(KW, S)                                                                                          \
  if (g.kernel_w == KW && g.stride_w == S) {                                                                        \
    if (channels_last)                                                                                              \
      depthwise_nhwc_row_kernel<T, W, KW, S, kTail><<<grid, kThreads, 0, stream>>>(x, w, bias, y, g, threads);             \
    else                                                                                                            \
      depthwise_nchw_row_kernel<T, KW, S, kTail><<<grid, kThreads, 0, stream>>>(x, w, bias, y, g, threads);                \
    return true;                                                                                                    \
  }
  MC_ROW_CASE(3, 1) MC_ROW_CASE(3, 2) MC_ROW_CASE(5, 1) MC_ROW_CASE(5, 2) MC_ROW_CASE(7, 1) MC_ROW_CASE(7, 2) MC_ROW_CASE(9, 1)
#undef MC_ROW_CASE
  return false;
}

// The one-output-pixel kernel, W channels a thread.
template <typename T, int W, bool kTail>
void launch_pixel_kernel(const DepthwiseGeometry& g, int sms, const T* x, const T* w, const T* bias, T* y, cudaStream_t stream) {
  const int64_t threads = g.batch * g.channels * g.out_h * g.out_w / W;
  depthwise_nhwc_kernel<T, W, kTail><<<grid_of(threads, sms), kThreads, 0, stream>>>(x, w, bias, y, g, threads);
}

// Channels-last, one output pixel a thread: 16-byte packs of channels, 8-byte ones where C is
// not a multiple of the 16-byte pack (GhostNet's 12, 36 and 60 channels), else one channel.
template <typename T, bool kTail>
void launch_widest_pixel_kernel(const DepthwiseGeometry& g, int sms, const T* x, const T* w, const T* bias, T* y,
                                cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (g.channels % kWide == 0) launch_pixel_kernel<T, kWide, kTail>(g, sms, x, w, bias, y, stream);
  else if (kWide > 4 && g.channels % 4 == 0) launch_pixel_kernel<T, 4, kTail>(g, sms, x, w, bias, y, stream);
  else launch_pixel_kernel<T, 1, kTail>(g, sms, x, w, bias, y, stream);
}

// The kernel kDirect launches channels-last: the row kernel (kDirect), or a pixel kernel where
// the work is too small to fill the GPU with row kernel threads (batch 1, late stages: 14x14x480
// gives 3360; kPixelPair has 16x their threads) or no row kernel runs the window (kPixel).
template <typename T>
DepthwiseAlgorithm channels_last_direct(const DepthwiseGeometry& g, int sms) {
  constexpr int kWide = 16 / sizeof(T);
  const int64_t row_threads = g.batch * g.out_h * ((g.out_w + kTile - 1) / kTile) * (g.channels / kWide);
  if (small_work(row_threads, sms) && g.channels % 2 == 0) return DepthwiseAlgorithm::kPixelPair;
  const bool row = g.multiplier == 1 && g.channels % kWide == 0 && row_kernel_exists(true, g);
  return row ? DepthwiseAlgorithm::kDirect : DepthwiseAlgorithm::kPixel;
}

// The kernel of the geometry's window, layout and algorithm, compiled with or without the
// epilogue's tail.
template <typename T, bool kTail>
void launch_depthwise(const DepthwiseGeometry& g, const T* px, const T* pw, const T* pb, T* py, cudaStream_t stream) {
  const int sms = depthwise_multiprocessors(g);
  DepthwiseAlgorithm algorithm = g.algorithm;
  const bool tiled = algorithm == DepthwiseAlgorithm::kTiled || (algorithm == DepthwiseAlgorithm::kAuto && tiled_preferred(g));
  const bool pixel = algorithm == DepthwiseAlgorithm::kPixel || algorithm == DepthwiseAlgorithm::kPixelPair;
  if (g.channels_last && !pixel && tiled && tiled_applies(g)) return launch_tiled<T, kTail>(g, px, pw, pb, py, stream);
  if (algorithm == DepthwiseAlgorithm::kStaged && staged_applies(g, sizeof(T)))
    return launch_staged<T, kTail>(g, sms, px, pw, pb, py, stream);
  constexpr int kWide = 16 / sizeof(T);
  if (!g.channels_last) {
    if (g.multiplier == 1 && launch_row_kernel<T, kWide, kTail>(false, g, sms, px, pw, pb, py, stream)) return;
    const int64_t outputs = g.batch * g.channels * g.out_h * g.out_w;
    depthwise_nchw_kernel<T, kTail><<<grid_of(outputs, sms), kThreads, 0, stream>>>(px, pw, pb, py, g, outputs);
    return;
  }
  if (!pixel) algorithm = channels_last_direct<T>(g, sms);
  if (algorithm == DepthwiseAlgorithm::kPixelPair && g.channels % 2 == 0)
    return launch_pixel_kernel<T, 2, kTail>(g, sms, px, pw, pb, py, stream);
  if (algorithm == DepthwiseAlgorithm::kDirect && launch_row_kernel<T, kWide, kTail>(true, g, sms, px, pw, pb, py, stream)) return;
  launch_widest_pixel_kernel<T, kTail>(g, sms, px, pw, pb, py, stream);
}

// kPixel and kPixelPair are left out where kDirect launches the same kernel (channels-last runs
// fp16 and bf16, whose 16-byte packs these are), so no kernel is timed twice.
std::vector<DepthwiseAlgorithm> depthwise_algorithms(const DepthwiseGeometry& g) {
  if (!g.channels_last) return {DepthwiseAlgorithm::kDirect};
  const DepthwiseAlgorithm direct = channels_last_direct<__half>(g, depthwise_multiprocessors(g));
  std::vector<DepthwiseAlgorithm> algorithms = {DepthwiseAlgorithm::kDirect};
  if (direct != DepthwiseAlgorithm::kPixel) algorithms.push_back(DepthwiseAlgorithm::kPixel);
  if (g.channels % 2 == 0 && direct != DepthwiseAlgorithm::kPixelPair) algorithms.push_back(DepthwiseAlgorithm::kPixelPair);
  if (tiled_applies(g)) algorithms.push_back(DepthwiseAlgorithm::kTiled);
  if (staged_applies(g, sizeof(__half))) algorithms.push_back(DepthwiseAlgorithm::kStaged);
  return algorithms;
}

const char* depthwise_algorithm_name(DepthwiseAlgorithm algorithm) {
  switch (algorithm) {
    case DepthwiseAlgorithm::kDirect: return "direct";
    case DepthwiseAlgorithm::kTiled: return "tiled";
    case DepthwiseAlgorithm::kPixel: return "pixel";
    case DepthwiseAlgorithm::kPixelPair: return "pixel pair";
    case DepthwiseAlgorithm::kStaged: return "staged";
    default: return "auto";
  }
}

void launch_depthwise_conv(ElementType type, const DepthwiseGeometry& g, const DepthwiseOperands& operands,
                           cudaStream_t stream) {
  if (g.batch * g.channels * g.out_h * g.out_w == 0) return;
  const bool tail = g.epilogue.scale || g.epilogue.residual;
  MC_DISPATCH_TYPE(type, {
    const T* px = static_cast<const T*>(operands.x);
    const T* pw = static_cast<const T*>(operands.w);
    const T* pb = static_cast<const T*>(operands.bias);
    T* py = static_cast<T*>(operands.y);
    if (tail) launch_depthwise<T, true>(g, px, pw, pb, py, stream);
    else launch_depthwise<T, false>(g, px, pw, pb, py, stream);
  });
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
