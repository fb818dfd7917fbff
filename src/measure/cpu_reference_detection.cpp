// Reference kernels of the detection kinds: RoiAlign (ONNX Runtime's sampling, max mode taking
// the largest weighted corner value), NonZero and NonMaxSuppression at the analyzer's output
// sizes (measured_kinds.h says how the rows past the kept ones read).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "measure/cpu_reference.h"

namespace modelcost {
namespace {

// One bilinear sample at (y, x) of a height x width map: the four corner values, each weighted.
float sample(const float* map, int64_t height, int64_t width, double y, double x, bool max) {
  if (y < -1.0 || y > height || x < -1.0 || x > width) return 0;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= height - 1) y = static_cast<double>(y1 = y0 = height - 1);
  if (x0 >= width - 1) x = static_cast<double>(x1 = x0 = width - 1);
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  const double v[4] = {hy * hx * map[y0 * width + x0], hy * lx * map[y0 * width + x1], ly * hx * map[y1 * width + x0],
                       ly * lx * map[y1 * width + x1]};
  if (max) return static_cast<float>(std::max(std::max(v[0], v[1]), std::max(v[2], v[3])));
  return static_cast<float>(v[0] + v[1] + v[2] + v[3]);
}

// ceil(size / bins) samples per bin, at most the bound of an ROI covering the whole map (NaN: 0).
int64_t adaptive_grid(double size, int64_t bins, int64_t map) {
  const double grid = std::ceil(size / bins), bound = std::ceil(static_cast<double>(map) / bins);
  return grid > 0 ? static_cast<int64_t>(std::min(grid, bound)) : 0;
}

// IoU of two boxes as ONNX Runtime computes it: corners in any order (or centre, size).
double iou(const float* a, const float* b, bool center) {
  auto corners = [center](const float* p, double* lo, double* hi) {
    for (int d = 0; d < 2; ++d) {
      if (center) {
        lo[d] = p[d] - p[d + 2] / 2;
        hi[d] = p[d] + p[d + 2] / 2;
      } else {
        lo[d] = std::min(p[d], p[d + 2]);
        hi[d] = std::max(p[d], p[d + 2]);
      }
    }
  };
  double alo[2], ahi[2], blo[2], bhi[2];
  corners(a, alo, ahi);
  corners(b, blo, bhi);
  const double ih = std::min(ahi[0], bhi[0]) - std::max(alo[0], blo[0]);
  const double iw = std::min(ahi[1], bhi[1]) - std::max(alo[1], blo[1]);
  if (ih <= 0 || iw <= 0) return 0;
  const double area_a = (ahi[0] - alo[0]) * (ahi[1] - alo[1]), area_b = (bhi[0] - blo[0]) * (bhi[1] - blo[1]);
  if (area_a <= 0 || area_b <= 0) return 0;
  return ih * iw / (area_a + area_b - ih * iw);
}

}  // namespace

void cpu_roi_align(const RoiAlignPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  const HostTensor &x = *in[0], &rois = *in[1], &batch = *in[2];
  const double offset = p.half_pixel ? 0.5 : 0;
  for (int64_t r = 0; r < p.rois; ++r) {
    const float* roi = &rois.data[r * 4];
    const double x0 = roi[0] * p.spatial_scale - offset, y0 = roi[1] * p.spatial_scale - offset;
    double w = roi[2] * p.spatial_scale - offset - x0, h = roi[3] * p.spatial_scale - offset - y0;
    if (!p.half_pixel) w = std::max(w, 1.0), h = std::max(h, 1.0);
    const double bin_h = h / p.out_h, bin_w = w / p.out_w;
    const int64_t grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : adaptive_grid(h, p.out_h, p.height);
    const int64_t grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : adaptive_grid(w, p.out_w, p.width);
    const double count = std::max<double>(static_cast<double>(grid_h * grid_w), 1);
    const int64_t b = std::clamp<int64_t>(static_cast<int64_t>(batch.data[r]), 0, p.batches - 1);
    for (int64_t c = 0; c < p.channels; ++c) {
      const float* map = &x.data[(b * p.channels + c) * p.height * p.width];
      float* out = &y.data[(r * p.channels + c) * p.out_h * p.out_w];
      for (int64_t ph = 0; ph < p.out_h; ++ph)
        for (int64_t pw = 0; pw < p.out_w; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy)
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const double sy = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h;
              const double sx = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w;
              const float v = sample(map, p.height, p.width, sy, sx, p.max);
              acc = p.max ? (first ? v : std::max<double>(acc, v)) : acc + v;
              first = false;
            }
          out[ph * p.out_w + pw] = static_cast<float>(p.max ? acc : acc / count);
        }
    }
  }
}

void cpu_nonzero(const NonZeroPlan& p, const HostTensor& x, HostTensor& y) {
  std::fill(y.data.begin(), y.data.end(), 0.f);
  const auto strides = contiguous_strides(p.dims);
  int64_t column = 0;
  for (size_t k = 0; k < x.data.size() && column < p.capacity; ++k) {
    if (x.data[k] == 0) continue;
    for (size_t d = 0; d < p.dims.size(); ++d)
      y.data[d * p.capacity + column] = static_cast<float>((static_cast<int64_t>(k) / strides[d]) % p.dims[d]);
    ++column;
  }
}

void cpu_nms(const NmsPlan& p, const HostTensor& boxes, const HostTensor& scores, HostTensor& y) {
  std::fill(y.data.begin(), y.data.end(), 0.f);
  std::vector<int64_t> order(static_cast<size_t>(p.boxes));
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t k = 0; k < p.classes; ++k) {
      const float* score = &scores.data[(b * p.classes + k) * p.boxes];
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return score[i] > score[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        if (p.has_score_threshold && !(score[i] > p.score_threshold)) break;
        bool suppressed = false;
        for (int64_t j : kept)
          suppressed = suppressed || iou(&boxes.data[(b * p.boxes + i) * 4], &boxes.data[(b * p.boxes + j) * 4],
                                         p.center_point_box) > p.iou_threshold;
        if (suppressed) continue;
        float* row = &y.data[((b * p.classes + k) * p.max_per_class + static_cast<int64_t>(kept.size())) * 3];
        row[0] = static_cast<float>(b), row[1] = static_cast<float>(k), row[2] = static_cast<float>(i);
        kept.push_back(i);
      }
    }
}

}  // namespace modelcost
