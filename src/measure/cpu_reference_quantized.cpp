// Reference quantization ops for the CPU path: (de)quantization, DynamicQuantizeLinear and the
// integer products (MatMulInteger, QLinearMatMul, QLinearConv). Products accumulate exactly in
// int64; requantization rounds half to even in float, as the GPU kernels do.
#include <algorithm>
#include <cmath>
#include <limits>

#include "measure/cpu_reference.h"

namespace modelcost {
namespace {

// The range an integer dtype holds.
void integer_range(int32_t dtype, double* lo, double* hi) {
  switch (dtype) {
    case 2: *lo = 0, *hi = 255; break;         // uint8
    case 3: *lo = -128, *hi = 127; break;      // int8
    case 4: *lo = 0, *hi = 65535; break;       // uint16
    case 5: *lo = -32768, *hi = 32767; break;  // int16
    default: *lo = -2147483648.0, *hi = 2147483647.0;
  }
}

float saturate(int32_t dtype, float v) {
  double lo = 0, hi = 0;
  integer_range(dtype, &lo, &hi);
  return static_cast<float>(std::clamp(static_cast<double>(v), lo, hi));
}

float value_or_zero(const HostTensor* t, int64_t i) { return t && !t->data.empty() ? t->data[i] : 0.f; }

// round(acc * multiplier) + zero_point, saturated to the output's dtype.
float requantize(int64_t acc, float multiplier, float zero_point, int32_t dtype) {
  return saturate(dtype, std::nearbyint(static_cast<float>(acc) * multiplier) + zero_point);
}

}  // namespace

void cpu_quantize(const QuantizePlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  const HostTensor& x = *in[0];
  const HostTensor& scale = *in[1];
  const HostTensor* zero = p.has_zero_point ? in[2] : nullptr;
  for (size_t i = 0; i < x.data.size(); ++i) {
    const int64_t a = static_cast<int64_t>(i) / p.inner % p.axis_len;
    if (p.dequantize) y.data[i] = (x.data[i] - value_or_zero(zero, a)) * scale.data[a];
    else y.data[i] = saturate(y.dtype, std::nearbyint(x.data[i] / scale.data[a]) + value_or_zero(zero, a));
  }
}

void cpu_dynamic_quantize(const HostTensor& x, std::vector<HostTensor>& out) {
  float lo = 0, hi = 0;  // the range always holds 0
  for (float v : x.data) lo = std::min(lo, v), hi = std::max(hi, v);
  const float scale = (hi - lo) / 255.f;
  const float zero = scale > 0 ? saturate(2, std::nearbyint(-lo / scale)) : 0.f;
  for (size_t i = 0; i < x.data.size(); ++i)
    out[0].data[i] = scale > 0 ? saturate(2, std::nearbyint(x.data[i] / scale) + zero) : 0.f;
  if (out.size() > 1 && !out[1].data.empty()) out[1].data[0] = scale;
  if (out.size() > 2 && !out[2].data.empty()) out[2].data[0] = zero;
}

void cpu_integer_matmul(const IntegerMatMulPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  auto input = [&](int i) -> const HostTensor* { return i >= 0 && static_cast<size_t>(i) < in.size() ? in[i] : nullptr; };
  const HostTensor &a = *in[p.a], &b = *in[p.b];
  const HostTensor *a_zero = input(p.a_zero), *b_zero = input(p.b_zero);
  const MatMulParams& g = p.gemm;
  float multiplier = 1, y_zero = 0;
  if (p.requantize()) {
    multiplier = input(p.a_scale)->data[0] * input(p.b_scale)->data[0] / input(p.y_scale)->data[0];
    y_zero = value_or_zero(input(p.y_zero), 0);
  }
  for (int64_t batch = 0; batch < g.batch; ++batch)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t n = 0; n < g.n; ++n) {
        const int64_t za = static_cast<int64_t>(value_or_zero(a_zero, p.a_zero_per_row ? m : 0));
        const int64_t zb = static_cast<int64_t>(value_or_zero(b_zero, p.b_zero_per_column ? n : 0));
        int64_t acc = 0;
        for (int64_t k = 0; k < g.k; ++k) {
          const int64_t av = static_cast<int64_t>(a.data[batch * g.a_batch_stride + m * g.k + k]);
          const int64_t bv = static_cast<int64_t>(b.data[batch * g.b_batch_stride + k * g.n + n]);
          acc += (av - za) * (bv - zb);
        }
        const int64_t at = (batch * g.m + m) * g.n + n;
        y.data[at] = p.requantize() ? requantize(acc, multiplier, y_zero, y.dtype) : static_cast<float>(acc);
      }
}

void cpu_qlinear_conv(const QLinearConvPlan& plan, const std::vector<const HostTensor*>& in, HostTensor& y) {
  const ConvParams& c = plan.conv;
  const size_t n = c.kernel.size(), shift = 3 - n;
  int64_t is[3] = {1, 1, 1}, os[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    is[shift + i] = c.in_size[i], os[shift + i] = c.out_size[i], k[shift + i] = c.kernel[i];
    s[shift + i] = c.strides[i], d[shift + i] = c.dilations[i], pad[shift + i] = c.pads[i];
  }
  const HostTensor &x = *in[0], &w = *in[3];
  const int64_t x_zero = static_cast<int64_t>(value_or_zero(in[2], 0)), group_in = c.in_channels / c.groups,
                group_out = c.out_channels / c.groups;
  const int64_t in_count = is[0] * is[1] * is[2], out_count = os[0] * os[1] * os[2], k_count = k[0] * k[1] * k[2];
  const HostTensor* bias = in.size() > 8 ? in[8] : nullptr;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t m = 0; m < c.out_channels; ++m) {
      const int64_t wc = plan.per_channel_weight ? m : 0;
      const int64_t w_zero = static_cast<int64_t>(value_or_zero(in[5], in[5] && in[5]->data.size() > 1 ? wc : 0));
      const float w_scale = in[4]->data[in[4]->data.size() > 1 ? wc : 0];
      const float multiplier = in[1]->data[0] * w_scale / in[6]->data[0];
      const int64_t g = m / group_out;
      for (int64_t o = 0; o < out_count; ++o) {
        const int64_t op[3] = {o / (os[1] * os[2]), o / os[2] % os[1], o % os[2]};
        int64_t acc = bias ? static_cast<int64_t>(bias->data[m]) : 0;
        for (int64_t ci = 0; ci < group_in; ++ci)
          for (int64_t kk = 0; kk < k_count; ++kk) {
            const int64_t kp[3] = {kk / (k[1] * k[2]), kk / k[2] % k[1], kk % k[2]};
            int64_t at = 0;
            bool inside = true;
            for (int a = 0; a < 3; ++a) {
              const int64_t i = op[a] * s[a] - pad[a] + kp[a] * d[a];
              inside = inside && i >= 0 && i < is[a];
              at = at * is[a] + i;
            }
            // Padding holds the zero point: it contributes nothing.
            if (!inside) continue;
            const int64_t xv = static_cast<int64_t>(x.data[(b * c.in_channels + g * group_in + ci) * in_count + at]);
            const int64_t wv = static_cast<int64_t>(w.data[(m * group_in + ci) * k_count + kk]);
            acc += (xv - x_zero) * (wv - w_zero);
          }
        y.data[(b * c.out_channels + m) * out_count + o] = requantize(acc, multiplier, value_or_zero(in[7], 0), y.dtype);
      }
    }
}

}  // namespace modelcost
