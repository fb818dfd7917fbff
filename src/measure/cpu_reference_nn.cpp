// Reference convolution, pooling, matrix products and resize for the CPU path.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "measure/cpu_reference.h"

namespace modelcost {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMatrix = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;
using ConstMapMatrix = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

// A window operation's geometry padded to 3 spatial dims (leading dims of size 1).
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1},
          pad[3] = {0, 0, 0};
  Window3(const std::vector<int64_t>& in_size, const std::vector<int64_t>& out_size, const std::vector<int64_t>& kernel,
          const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads) {
    const size_t n = kernel.size(), shift = 3 - n;
    for (size_t i = 0; i < n; ++i) {
      in[shift + i] = in_size[i];
      out[shift + i] = out_size[i];
      k[shift + i] = kernel[i];
      stride[shift + i] = strides[i];
      dil[shift + i] = dilations.empty() ? 1 : dilations[i];
      pad[shift + i] = pads[i];
    }
  }
  int64_t in_count() const { return in[0] * in[1] * in[2]; }
  int64_t out_count() const { return out[0] * out[1] * out[2]; }
  int64_t k_count() const { return k[0] * k[1] * k[2]; }
};

}  // namespace

void cpu_conv(const ConvParams& c, const HostTensor& x, const HostTensor& w, const HostTensor* bias, HostTensor& y) {
  std::vector<int64_t> out_size = c.out_size;
  Window3 win(c.in_size, out_size, c.kernel, c.strides, c.dilations, c.pads);
  const int64_t group_in = c.in_channels / c.groups, group_out = c.out_channels / c.groups;
  const int64_t patch = group_in * win.k_count(), positions = win.out_count();
  RowMatrix columns(patch, positions);
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t g = 0; g < c.groups; ++g) {
      // im2col: one row per (input channel, kernel offset), one column per output position.
      for (int64_t ci = 0; ci < group_in; ++ci) {
        const float* plane = &x.data[((n * c.in_channels) + g * group_in + ci) * win.in_count()];
        for (int64_t kd = 0; kd < win.k[0]; ++kd)
          for (int64_t kh = 0; kh < win.k[1]; ++kh)
            for (int64_t kw = 0; kw < win.k[2]; ++kw) {
              const int64_t row = ((ci * win.k[0] + kd) * win.k[1] + kh) * win.k[2] + kw;
              float* dst = columns.data() + row * positions;
              for (int64_t od = 0; od < win.out[0]; ++od)
                for (int64_t oh = 0; oh < win.out[1]; ++oh)
                  for (int64_t ow = 0; ow < win.out[2]; ++ow) {
                    const int64_t id = od * win.stride[0] - win.pad[0] + kd * win.dil[0];
                    const int64_t ih = oh * win.stride[1] - win.pad[1] + kh * win.dil[1];
                    const int64_t iw = ow * win.stride[2] - win.pad[2] + kw * win.dil[2];
                    const bool inside = id >= 0 && id < win.in[0] && ih >= 0 && ih < win.in[1] && iw >= 0 && iw < win.in[2];
                    *dst++ = inside ? plane[(id * win.in[1] + ih) * win.in[2] + iw] : 0.f;
                  }
            }
      }
      ConstMapMatrix weights(&w.data[g * group_out * patch], group_out, patch, Eigen::OuterStride<>(patch));
      MapMatrix out(&y.data[(n * c.out_channels + g * group_out) * positions], group_out, positions,
                    Eigen::OuterStride<>(positions));
      out.noalias() = weights * columns;
      if (bias)
        for (int64_t o = 0; o < group_out; ++o) out.row(o).array() += bias->data[g * group_out + o];
    }
}

void cpu_pool(const PoolParams& p, const HostTensor& x, HostTensor& y) {
  const size_t n = p.kernel.size();
  const std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end()), out(y.shape.begin() + 2, y.shape.end());
  Window3 win(in, out, p.kernel, p.strides, {}, p.pads);
  // End pads bound the window for count_include_pad; past them (ceil_mode) nothing counts.
  int64_t limit[3] = {1, 1, 1};
  for (size_t i = 0; i < n; ++i) limit[3 - n + i] = in[i] + p.pads[n + i];
  const int64_t planes = x.shape[0] * x.shape[1];
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* src = &x.data[plane * win.in_count()];
    float* dst = &y.data[plane * win.out_count()];
    for (int64_t od = 0; od < win.out[0]; ++od)
      for (int64_t oh = 0; oh < win.out[1]; ++oh)
        for (int64_t ow = 0; ow < win.out[2]; ++ow) {
          double acc = p.max ? -std::numeric_limits<double>::infinity() : 0;
          int64_t count = 0, padded_count = 0;
          for (int64_t kd = 0; kd < win.k[0]; ++kd)
            for (int64_t kh = 0; kh < win.k[1]; ++kh)
              for (int64_t kw = 0; kw < win.k[2]; ++kw) {
                const int64_t id = od * win.stride[0] - win.pad[0] + kd;
                const int64_t ih = oh * win.stride[1] - win.pad[1] + kh;
                const int64_t iw = ow * win.stride[2] - win.pad[2] + kw;
                if (id < limit[0] && ih < limit[1] && iw < limit[2]) ++padded_count;
                if (id < 0 || id >= win.in[0] || ih < 0 || ih >= win.in[1] || iw < 0 || iw >= win.in[2]) continue;
                const double v = src[(id * win.in[1] + ih) * win.in[2] + iw];
                acc = p.max ? std::max(acc, v) : acc + v;
                ++count;
              }
          if (!p.max) acc /= static_cast<double>(p.count_include_pad ? padded_count : std::max<int64_t>(count, 1));
          *dst++ = static_cast<float>(acc);
        }
  }
}

void cpu_matmul(const MatMulParams& m, const HostTensor& a, const HostTensor& b, const HostTensor* bias, HostTensor& y) {
  for (int64_t batch = 0; batch < m.batch; ++batch) {
    const float* pa = &a.data[batch * m.a_batch_stride];
    const float* pb = &b.data[batch * m.b_batch_stride];
    RowMatrix ma = m.trans_a ? RowMatrix(ConstMapMatrix(pa, m.k, m.m, Eigen::OuterStride<>(m.m)).transpose())
                             : RowMatrix(ConstMapMatrix(pa, m.m, m.k, Eigen::OuterStride<>(m.k)));
    RowMatrix mb = m.trans_b ? RowMatrix(ConstMapMatrix(pb, m.n, m.k, Eigen::OuterStride<>(m.k)).transpose())
                             : RowMatrix(ConstMapMatrix(pb, m.k, m.n, Eigen::OuterStride<>(m.n)));
    MapMatrix out(&y.data[batch * m.m * m.n], m.m, m.n, Eigen::OuterStride<>(m.n));
    out.noalias() = static_cast<float>(m.alpha) * (ma * mb);
    if (!bias) continue;
    const float beta = static_cast<float>(m.beta);
    for (int64_t i = 0; i < m.m; ++i)
      for (int64_t j = 0; j < m.n; ++j) {
        float c = 0;
        switch (m.bias) {
          case MatMulParams::Bias::kScalar: c = bias->data[0]; break;
          case MatMulParams::Bias::kRow: c = bias->data[j]; break;
          case MatMulParams::Bias::kColumn: c = bias->data[i]; break;
          case MatMulParams::Bias::kFull: c = bias->data[i * m.n + j]; break;
          case MatMulParams::Bias::kNone: break;
        }
        out(i, j) += beta * c;
      }
  }
}

namespace {
// Source coordinate of output coordinate o along one axis (ONNX Resize's transformation modes).
double source_coordinate(const std::string& mode, int64_t o, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  if (mode == "asymmetric") return o / scale;
  if (mode == "align_corners") return out == 1 ? 0 : o * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (mode == "pytorch_half_pixel" && out == 1) return -0.5;
  return (o + 0.5) / scale - 0.5;  // half_pixel
}

int64_t nearest_index(const std::string& mode, double x, int64_t in) {
  int64_t i;
  if (mode == "floor") i = static_cast<int64_t>(std::floor(x));
  else if (mode == "ceil") i = static_cast<int64_t>(std::ceil(x));
  else if (mode == "round_prefer_ceil") i = static_cast<int64_t>(std::floor(x + 0.5));
  else i = static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
  return std::clamp<int64_t>(i, 0, in - 1);
}
// ONNX's cubic convolution at fraction t of the interval: the weights of taps -1, 0, 1, 2.
void cubic_weights(double t, double a, double w[4]) {
  const auto outer = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  const auto inner = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };          // |d| <= 1
  w[0] = outer(t + 1);
  w[1] = inner(t);
  w[2] = inner(1 - t);
  w[3] = outer(2 - t);
}

double cubic_sample(const ResizePlan& p, const float* src, int64_t ih, int64_t iw, double sy, double sx) {
  const int64_t y0 = static_cast<int64_t>(std::floor(sy)), x0 = static_cast<int64_t>(std::floor(sx));
  double wy[4], wx[4];
  cubic_weights(sy - y0, p.cubic_coeff_a, wy);
  cubic_weights(sx - x0, p.cubic_coeff_a, wx);
  double sum = 0, weight = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const int64_t yy = y0 - 1 + a, xx = x0 - 1 + b;
      const bool outside = yy < 0 || yy >= ih || xx < 0 || xx >= iw;
      if (outside && p.exclude_outside) continue;
      const double w = wy[a] * wx[b];
      sum += w * src[std::clamp<int64_t>(yy, 0, ih - 1) * iw + std::clamp<int64_t>(xx, 0, iw - 1)];
      weight += w;
    }
  return p.exclude_outside && weight != 0 ? sum / weight : sum;
}

}  // namespace

void cpu_resize(const ResizePlan& p, const HostTensor& x, HostTensor& y) {
  const int64_t planes = x.shape[0] * x.shape[1], ih = x.shape[2], iw = x.shape[3], oh = y.shape[2], ow = y.shape[3];
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* src = &x.data[plane * ih * iw];
    float* dst = &y.data[plane * oh * ow];
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t c = 0; c < ow; ++c) {
        const double sy = source_coordinate(p.coordinate_mode, r, ih, oh);
        const double sx = source_coordinate(p.coordinate_mode, c, iw, ow);
        if (p.cubic) {
          dst[r * ow + c] = static_cast<float>(cubic_sample(p, src, ih, iw, sy, sx));
          continue;
        }
        if (!p.linear) {
          dst[r * ow + c] = src[nearest_index(p.nearest_mode, sy, ih) * iw + nearest_index(p.nearest_mode, sx, iw)];
          continue;
        }
        const double cy = std::clamp(sy, 0.0, static_cast<double>(ih - 1)), cx = std::clamp(sx, 0.0, static_cast<double>(iw - 1));
        const int64_t y0 = static_cast<int64_t>(std::floor(cy)), x0 = static_cast<int64_t>(std::floor(cx));
        const int64_t y1 = std::min(y0 + 1, ih - 1), x1 = std::min(x0 + 1, iw - 1);
        const double fy = cy - y0, fx = cx - x0;
        dst[r * ow + c] = static_cast<float>((1 - fy) * ((1 - fx) * src[y0 * iw + x0] + fx * src[y0 * iw + x1]) +
                                             fy * ((1 - fx) * src[y1 * iw + x0] + fx * src[y1 * iw + x1]));
      }
  }
}

}  // namespace modelcost
