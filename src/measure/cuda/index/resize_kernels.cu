// Resize (nearest, linear and cubic over the two innermost axes, every coordinate mode): whole
// 16-byte runs of a row per thread where the row allows (resize_rows_kernel), else one output per
// thread.
#include <algorithm>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/index_math.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {

enum Coord { kHalfPixel, kAsymmetric, kAlignCorners, kPytorchHalfPixel };
enum Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

__device__ __forceinline__ float source_coordinate(int mode, int64_t o, int64_t in, int64_t out) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  if (mode == kAsymmetric) return o / scale;
  if (mode == kAlignCorners) return out == 1 ? 0.f : o * static_cast<float>(in - 1) / static_cast<float>(out - 1);
  if (mode == kPytorchHalfPixel && out == 1) return -0.5f;
  return (o + 0.5f) / scale - 0.5f;
}

__device__ __forceinline__ int64_t nearest(int mode, float x, int64_t in) {
  float r = mode == kFloor ? floorf(x) : mode == kCeil ? ceilf(x) : mode == kRoundPreferCeil ? floorf(x + 0.5f) : ceilf(x - 0.5f);
  int64_t i = static_cast<int64_t>(r);
  return i < 0 ? 0 : (i >= in ? in - 1 : i);
}

__device__ __forceinline__ void cubic_weights(float t, float a, float w[4]) {
  const float d0 = t + 1, d3 = 2 - t, u = 1 - t;
  w[0] = ((a * d0 - 5 * a) * d0 + 8 * a) * d0 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
  w[3] = ((a * d3 - 5 * a) * d3 + 8 * a) * d3 - 4 * a;
}

struct CubicMode {
  bool on;
  float a;
  bool exclude_outside;
};

// ONNX's cubic convolution over the 4x4 taps around (sy, sx); edge taps clamped or excluded.
template <typename T>
__device__ float cubic_sample(const T* src, int64_t ih, int64_t iw, float sy, float sx, CubicMode m) {
  const int64_t y0 = static_cast<int64_t>(floorf(sy)), x0 = static_cast<int64_t>(floorf(sx));
  float wy[4], wx[4];
  cubic_weights(sy - y0, m.a, wy);
  cubic_weights(sx - x0, m.a, wx);
  float sum = 0, weight = 0;
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const int64_t yy = y0 - 1 + a, cy = yy < 0 ? 0 : (yy >= ih ? ih - 1 : yy);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int64_t xx = x0 - 1 + b, cx = xx < 0 ? 0 : (xx >= iw ? iw - 1 : xx);
      if (m.exclude_outside && (yy != cy || xx != cx)) continue;
      const float w = wy[a] * wx[b];
      sum += w * to_float(src[cy * iw + cx]);
      weight += w;
    }
  }
  return m.exclude_outside && weight != 0.f ? sum / weight : sum;
}

// An output element's plane, row and column. Below 2^31 elements, by multiply-and-shift dividers:
// 64-bit divisions made a large upsampling (a segmentation head's 520x520 output at batch 32)
// bound by integer arithmetic, 10x off its memory time.
struct ResizeIndex {
  FastDivider row_len, rows;
  bool small;
  int64_t ow, oh;
  __device__ __forceinline__ void split(int64_t i, int64_t& plane, int64_t& r, int64_t& c) const {
    if (small) {
      const uint32_t row = row_len.div(static_cast<uint32_t>(i)), p = rows.div(row);
      c = i - int64_t(row) * ow;
      plane = p;
      r = row - int64_t(p) * oh;
    } else {
      c = i % ow;
      r = (i / ow) % oh;
      plane = i / (ow * oh);
    }
  }
};

template <typename T>
__global__ void resize_kernel(const T* x, T* y, bool linear, CubicMode cubic, int coord, int near, int64_t ih, int64_t iw,
                              ResizeIndex index, int64_t n) {
  const int64_t oh = index.oh, ow = index.ow;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t plane, r, c;
    index.split(i, plane, r, c);
    const T* src = x + plane * ih * iw;
    const float sy = source_coordinate(coord, r, ih, oh), sx = source_coordinate(coord, c, iw, ow);
    if (cubic.on) {
      y[i] = from_float<T>(cubic_sample(src, ih, iw, sy, sx, cubic));
      continue;
    }
    if (!linear) {
      y[i] = src[nearest(near, sy, ih) * iw + nearest(near, sx, iw)];
      continue;
    }
    const float cy = fminf(fmaxf(sy, 0.f), float(ih - 1)), cx = fminf(fmaxf(sx, 0.f), float(iw - 1));
    const int64_t y0 = static_cast<int64_t>(floorf(cy)), x0 = static_cast<int64_t>(floorf(cx));
    const int64_t y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    const float fy = cy - y0, fx = cx - x0;
    const float v = (1 - fy) * ((1 - fx) * to_float(src[y0 * iw + x0]) + fx * to_float(src[y0 * iw + x1])) +
                    fy * ((1 - fx) * to_float(src[y1 * iw + x0]) + fx * to_float(src[y1 * iw + x1]));
    y[i] = from_float<T>(v);
  }
}

// Eight outputs of one row per thread, stored as whole 16-byte vectors. A thread keeps one run of
// columns and walks rows: its columns' source pixels and weights are found once, so a row costs four
// loads and three lerps per output. Found per row, the float conversions of the column arithmetic
// (a quarter-rate instruction each) held a segmentation head's 8x upsampling of 21x64x64 logits to
// 512x512 at batch 32 to 0.9 TB/s.
constexpr int kResizeRun = 8;

// Every coordinate mode maps output o to source o * step + offset. The linear columns take that
// form, one multiply-add per output where source_coordinate divides; the two differ by an ulp,
// which moves a bilinear sample (continuous in its coordinate) by as little. The nearest columns
// and every row keep the division, whose rounding decides which pixel they copy.
struct LinearAxis {
  float step, offset;
};
__device__ __forceinline__ LinearAxis linear_axis(int mode, int64_t in, int64_t out) {
  const float step = static_cast<float>(in) / static_cast<float>(out);
  if (mode == kAsymmetric) return {step, 0.f};
  if (mode == kAlignCorners) return {out == 1 ? 0.f : static_cast<float>(in - 1) / static_cast<float>(out - 1), 0.f};
  if (mode == kPytorchHalfPixel && out == 1) return {0.f, -0.5f};
  return {step, 0.5f * step - 0.5f};
}

// A run's source columns: the left and right pixel of each output and the right one's weight (linear),
// or the pixel it copies (nearest, in left).
struct RunColumns {
  int left[kResizeRun], right[kResizeRun];
  float weight[kResizeRun];
};

__device__ __forceinline__ RunColumns run_columns(bool linear, int coord, int near, int64_t iw, int64_t ow, int c0) {
  RunColumns cols;
  const LinearAxis across = linear_axis(coord, iw, ow);
  const int last = static_cast<int>(iw - 1);
#pragma unroll
  for (int k = 0; k < kResizeRun; ++k) {
    if (!linear) {
      cols.left[k] = static_cast<int>(nearest(near, source_coordinate(coord, c0 + k, iw, ow), iw));
      cols.right[k] = cols.left[k];
      cols.weight[k] = 0.f;
      continue;
    }
    const float cx = fminf(fmaxf(fmaf(static_cast<float>(c0 + k), across.step, across.offset), 0.f), float(last));
    cols.left[k] = static_cast<int>(cx);  // cx >= 0: truncation floors
    cols.right[k] = cols.left[k] < last ? cols.left[k] + 1 : last;
    cols.weight[k] = cx - static_cast<float>(cols.left[k]);
  }
  return cols;
}

// Thread t keeps column run t % runs_per_row and walks rows t / runs_per_row, + row_lanes, ...
template <typename T>
__global__ void resize_rows_kernel(const T* x, T* y, bool linear, int coord, int near, int64_t ih, int64_t iw,
                                   int64_t oh, int64_t ow, FastDivider runs_per_row, FastDivider rows_per_plane,
                                   uint32_t rows, uint32_t row_lanes) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t first_row = runs_per_row.div(t);
  if (first_row >= row_lanes) return;
  const int c0 = static_cast<int>(t - first_row * runs_per_row.divisor) * kResizeRun;
  const RunColumns cols = run_columns(linear, coord, near, iw, ow, c0);
  for (uint32_t row = first_row; row < rows; row += row_lanes) {
    const uint32_t plane = rows_per_plane.div(row);
    const int r = static_cast<int>(row - plane * rows_per_plane.divisor);
    const T* src = x + int64_t(plane) * ih * iw;
    const float sy = source_coordinate(coord, r, ih, oh);
    alignas(16) T out[kResizeRun];
    if (!linear) {
      const T* line = src + nearest(near, sy, ih) * iw;
#pragma unroll
      for (int k = 0; k < kResizeRun; ++k) out[k] = line[cols.left[k]];
    } else {
      const float cy = fminf(fmaxf(sy, 0.f), float(ih - 1));
      const int y0 = static_cast<int>(cy), y1 = y0 + 1 < ih ? y0 + 1 : static_cast<int>(ih - 1);
      const float fy = cy - static_cast<float>(y0);
      const T *top = src + int64_t(y0) * iw, *bottom = src + int64_t(y1) * iw;
#pragma unroll
      for (int k = 0; k < kResizeRun; ++k) {
        const float fx = cols.weight[k];
        const int x0 = cols.left[k], x1 = cols.right[k];
        out[k] = from_float<T>((1 - fy) * ((1 - fx) * to_float(top[x0]) + fx * to_float(top[x1])) +
                               fy * ((1 - fx) * to_float(bottom[x0]) + fx * to_float(bottom[x1])));
      }
    }
    int4* dst = reinterpret_cast<int4*>(y + int64_t(row) * ow + c0);
#pragma unroll
    for (int k = 0; k < int(sizeof(out) / sizeof(int4)); ++k) dst[k] = reinterpret_cast<const int4*>(out)[k];
  }
}

// Row lanes enough for the grid-stride cap of threads, whole runs of a row per lane.
uint32_t resize_row_lanes(uint32_t runs_per_row, uint32_t rows) {
  const uint32_t threads = static_cast<uint32_t>(capped_grid(int64_t(runs_per_row) * rows)) * kThreads;
  return std::max<uint32_t>(1, std::min(rows, threads / runs_per_row));
}

void launch_resize(ElementType type, const ResizePlan& plan, const ResizeGeometry& g, const void* x, void* y,
                   cudaStream_t stream) {
  const int64_t ih = g.in_h, iw = g.in_w, oh = g.out_h, ow = g.out_w;
  const int coord = plan.coordinate_mode == "asymmetric" ? kAsymmetric
                    : plan.coordinate_mode == "align_corners" ? kAlignCorners
                    : plan.coordinate_mode == "pytorch_half_pixel" ? kPytorchHalfPixel : kHalfPixel;
  const int near = plan.nearest_mode == "floor" ? kFloor : plan.nearest_mode == "ceil" ? kCeil
                   : plan.nearest_mode == "round_prefer_ceil" ? kRoundPreferCeil : kRoundPreferFloor;
  const int64_t n = g.planes * oh * ow;
  const CubicMode cubic{plan.cubic, static_cast<float>(plan.cubic_coeff_a), plan.exclude_outside};
  if (n == 0) return;
  const bool small = fits_int32(n);
  const bool aligned = reinterpret_cast<uintptr_t>(y) % 16 == 0 && ow % kResizeRun == 0;
  if (small && aligned && !cubic.on) {
    const uint32_t per_row = static_cast<uint32_t>(ow / kResizeRun), rows = static_cast<uint32_t>(g.planes * oh);
    const uint32_t lanes = resize_row_lanes(per_row, rows);
    MC_DISPATCH_TYPE(type, resize_rows_kernel<T><<<grid_for(int64_t(per_row) * lanes), kThreads, 0, stream>>>(
                               static_cast<const T*>(x), static_cast<T*>(y), plan.linear, coord, near, ih, iw, oh, ow,
                               FastDivider(per_row), FastDivider(static_cast<uint32_t>(oh)), rows, lanes));
    MC_CUDA_CHECK_LAUNCH();
    return;
  }
  const ResizeIndex index{FastDivider(small ? static_cast<uint32_t>(ow) : 1u), FastDivider(small ? static_cast<uint32_t>(oh) : 1u),
                          small, ow, oh};
  MC_DISPATCH_TYPE(type, resize_kernel<T><<<capped_grid(n), kThreads, 0, stream>>>(
                             static_cast<const T*>(x), static_cast<T*>(y), plan.linear, cubic, coord, near, ih, iw, index, n));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
