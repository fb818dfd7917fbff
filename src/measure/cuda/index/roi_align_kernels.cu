// RoiAlign over NCHW maps: one thread per output bin (roi, channel, y, x), its grid of bilinear
// samples computed in float, as ONNX Runtime samples (cpu_reference_detection.cpp is the reference).
#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

// ceil(size / bins) samples per bin, at most the bound of an ROI covering the whole map (NaN: 0).
__device__ int adaptive_grid(float size, int64_t bins, int64_t map) {
  const float grid = ceilf(size / bins), bound = ceilf(static_cast<float>(map) / bins);
  return grid > 0 ? static_cast<int>(fminf(grid, bound)) : 0;
}

template <typename T>
__device__ float bilinear(const T* map, int height, int width, float y, float x, bool max) {
  if (y < -1.f || y > height || x < -1.f || x > width) return 0.f;
  y = fmaxf(y, 0.f);
  x = fmaxf(x, 0.f);
  int y0 = static_cast<int>(y), x0 = static_cast<int>(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= height - 1) y = static_cast<float>(y1 = y0 = height - 1);
  if (x0 >= width - 1) x = static_cast<float>(x1 = x0 = width - 1);
  const float ly = y - y0, lx = x - x0, hy = 1.f - ly, hx = 1.f - lx;
  const float v0 = hy * hx * to_float(map[y0 * width + x0]), v1 = hy * lx * to_float(map[y0 * width + x1]);
  const float v2 = ly * hx * to_float(map[y1 * width + x0]), v3 = ly * lx * to_float(map[y1 * width + x1]);
  return max ? fmaxf(fmaxf(v0, v1), fmaxf(v2, v3)) : v0 + v1 + v2 + v3;
}

template <typename T>
__global__ void roi_align(RoiAlignPlan p, const T* x, const T* rois, const int64_t* batch, T* y) {
  const int64_t total = p.rois * p.channels * p.out_h * p.out_w;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int pw = static_cast<int>(i % p.out_w), ph = static_cast<int>((i / p.out_w) % p.out_h);
    const int64_t c = (i / (p.out_w * p.out_h)) % p.channels, r = i / (p.out_w * p.out_h * p.channels);
    const float offset = p.half_pixel ? 0.5f : 0.f;
    const float x0 = to_float(rois[r * 4]) * p.spatial_scale - offset, y0 = to_float(rois[r * 4 + 1]) * p.spatial_scale - offset;
    float w = to_float(rois[r * 4 + 2]) * p.spatial_scale - offset - x0, h = to_float(rois[r * 4 + 3]) * p.spatial_scale - offset - y0;
    if (!p.half_pixel) w = fmaxf(w, 1.f), h = fmaxf(h, 1.f);
    const float bin_h = h / p.out_h, bin_w = w / p.out_w;
    const int grid_h = p.sampling_ratio > 0 ? static_cast<int>(p.sampling_ratio) : adaptive_grid(h, p.out_h, p.height);
    const int grid_w = p.sampling_ratio > 0 ? static_cast<int>(p.sampling_ratio) : adaptive_grid(w, p.out_w, p.width);
    const int64_t b = min(max(batch[r], int64_t{0}), p.batches - 1);
    const T* map = x + (b * p.channels + c) * p.height * p.width;
    float acc = 0.f;
    bool first = true;
    for (int iy = 0; iy < grid_h; ++iy) {
      const float sy = y0 + ph * bin_h + (iy + 0.5f) * bin_h / grid_h;
      for (int ix = 0; ix < grid_w; ++ix) {
        const float sx = x0 + pw * bin_w + (ix + 0.5f) * bin_w / grid_w;
        const float v = bilinear(map, static_cast<int>(p.height), static_cast<int>(p.width), sy, sx, p.max);
        acc = p.max ? (first ? v : fmaxf(acc, v)) : acc + v;
        first = false;
      }
    }
    const float count = fmaxf(static_cast<float>(grid_h * grid_w), 1.f);
    y[i] = from_float<T>(p.max ? acc : acc / count);
  }
}

}  // namespace

void launch_roi_align(ElementType type, const RoiAlignPlan& plan, const void* x, const void* rois,
                      const int64_t* batch_indices, void* y, cudaStream_t stream) {
  const int64_t total = plan.rois * plan.channels * plan.out_h * plan.out_w;
  MC_DISPATCH_TYPE(type, roi_align<T><<<grid_for(total), kThreads, 0, stream>>>(
                             plan, static_cast<const T*>(x), static_cast<const T*>(rois), batch_indices, static_cast<T*>(y)));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
