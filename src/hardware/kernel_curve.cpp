// Kernel curves (docs/roofline.md, "Calibrated kernels"): the classes, and the fit of one curve
// to calibrate's samples of real library kernels.
#include <algorithm>
#include <cmath>
#include <limits>

#include "modelcost/kernel_curve_fit.h"

namespace modelcost {

const std::vector<std::string>& kernel_class_names() {
  // The kernel plan's classes with curves of their own (layout copies and gathers where an entry
  // has theirs, else the pointwise curve, as the rest); *_unaligned: the matrix classes' shapes
  // libraries tile badly, conv_dilated and depthwise_dilated: convs of dilated windows (docs/roofline.md);
  // decode_*, prefill_attention and expert_*: the deployed LLM step's own kernels (docs/llm.md),
  // decode_* and expert_routing priced by the bytes they stream.
  static const std::vector<std::string> names = {
      "gemm",          "conv1x1",        "conv",          "grouped_conv",     "depthwise",      "depthwise_swish",
      "depthwise_dilated",
      "gemm_unaligned", "conv1x1_unaligned", "conv_unaligned", "grouped_conv_unaligned", "conv_dilated",
      "attention",     "pointwise",      "reduction",     "norm",             "pooling",
      "layout_copy",   "gather_scatter",
      "decode_gemm_m1", "decode_gemm_m32", "decode_attention", "decode_rowwise", "decode_norm",
      "prefill_attention", "expert_gemm", "expert_routing"};
  return names;
}

bool is_depthwise_curve(const std::string& name) {
  return name == "depthwise" || name == "depthwise_swish" || name == "depthwise_dilated";
}

bool kernel_class_is_matrix(const std::string& name) {
  return name == "gemm" || name == "conv1x1" || name == "conv" || name == "grouped_conv" || is_depthwise_curve(name) ||
         name == "gemm_unaligned" || name == "conv1x1_unaligned" || name == "conv_unaligned" ||
         name == "grouped_conv_unaligned" || name == "conv_dilated" || name == "attention" || name == "prefill_attention" ||
         name == "expert_gemm";
}

namespace {

// Throughputs tried: 48 log-spaced values per decade range.
std::vector<double> log_range(double lo, double hi, int steps) {
  std::vector<double> out;
  for (int i = 0; i <= steps; ++i) out.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / steps));
  return out;
}

struct Fit {
  double a = 0, b = 0, cost = std::numeric_limits<double>::infinity();
};

// Least squares of sum((a + b*x_i + m_i) / t_i - 1)^2 over a, b >= 0 (b fixed at 0 unless use_b).
Fit fit_linear(const std::vector<KernelSample>& s, const std::vector<double>& m, bool use_b) {
  auto cost = [&](double a, double b) {
    double c = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const double r = (a + b * s[i].k / 1000 + m[i]) / s[i].us - 1;
      c += r * r;
    }
    return c;
  };
  // With weights w = 1/t: minimise sum(w*a + w*x*b - (1 - w*m))^2.
  double saa = 0, sab = 0, sbb = 0, sa = 0, sb = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const double w = 1 / s[i].us, x = s[i].k / 1000, y = 1 - w * m[i];
    saa += w * w;
    sab += w * w * x;
    sbb += w * x * w * x;
    sa += w * y;
    sb += w * x * y;
  }
  Fit best;
  auto consider = [&](double a, double b) {
    a = std::max(0.0, a);
    b = std::max(0.0, b);
    const double c = cost(a, b);
    if (c < best.cost) best = {a, b, c};
  };
  consider(saa > 0 ? sa / saa : 0, 0);
  if (use_b) {
    const double det = saa * sbb - sab * sab;
    if (std::fabs(det) > 1e-30) consider((sa * sbb - sb * sab) / det, (saa * sb - sab * sa) / det);
    if (sbb > 0) consider(0, sb / sbb);
  }
  return best;
}

// Fits the linear terms (fixed cost, K loop) of `c` to the samples; keeps it where it beats `best`.
void consider_curve(const std::vector<KernelSample>& s, KernelCurve c, bool matrix, KernelCurve& best, double& best_cost) {
  std::vector<double> m(s.size());
  for (size_t i = 0; i < s.size(); ++i) m[i] = c.throughput_us(c.compute_us(s[i].flops), c.memory_us(s[i].bytes, s[i].k));
  const Fit f = fit_linear(s, m, matrix);
  if (f.cost >= best_cost) return;
  best_cost = f.cost;
  best = c;
  best.fixed_us = f.a;
  best.k_us_per_1000 = f.b;
}

}  // namespace

CurveTerms curve_terms(const std::string& kernel_class) {
  if (kernel_class == "conv1x1" || kernel_class == "conv1x1_unaligned") return CurveTerms::kMatrixShortReduction;
  if (kernel_class == "decode_attention") return CurveTerms::kWaves;
  return kernel_class_is_matrix(kernel_class) ? CurveTerms::kMatrix : CurveTerms::kBytes;
}

bool curve_has_work_terms(const std::string& kernel_class) { return curve_terms(kernel_class) != CurveTerms::kBytes; }

KernelCurve fit_kernel_curve(const std::vector<KernelSample>& all, CurveTerms terms) {
  const bool matrix = terms != CurveTerms::kBytes;
  std::vector<KernelSample> s;
  for (const auto& x : all)
    if (x.us > 0) s.push_back(x);
  if (s.empty()) return {};
  const std::vector<double> rates = matrix ? log_range(0.5, 2000, 144) : std::vector<double>{0};
  // 100 GB/s to 20 TB/s for what streams through memory; below, down to 1 GB/s, for a kernel
  // whose "bytes" count work one block does at its own pace (expert_routing).
  std::vector<double> bandwidths = log_range(1, 100, 48);
  bandwidths.pop_back();
  for (double b : log_range(100, 20000, 96)) bandwidths.push_back(b);
  // The knee: max (0), or a p-norm of the two terms for a kernel whose math and traffic overlap
  // only in part (byte classes have one term and keep the max; a wave class's terms add).
  const std::vector<double> knees = terms == CurveTerms::kWaves ? std::vector<double>{1}
                                    : matrix                    ? std::vector<double>{0, 4, 2}
                                                                : std::vector<double>{0};
  auto search = [&](double k_half, KernelCurve& best, double& best_cost) {
    for (double knee : knees)
      for (double tflops : rates)
        for (double gbps : bandwidths) consider_curve(s, KernelCurve{0, 0, tflops, gbps, knee, k_half}, matrix, best, best_cost);
  };
  KernelCurve best;
  double best_cost = std::numeric_limits<double>::infinity();
  search(0, best, best_cost);
  if (terms != CurveTerms::kMatrixShortReduction) return best;
  // The short-reduction slowdown is kept only where it cuts the squared error by a tenth or more:
  // samples that do not ask for it leave the class without.
  KernelCurve with;
  double with_cost = std::numeric_limits<double>::infinity();
  for (double k_half : {8.0, 16.0, 32.0, 64.0, 128.0}) search(k_half, with, with_cost);
  return with_cost < 0.9 * best_cost ? with : best;
}

std::vector<double> held_out_errors(const std::vector<KernelSample>& samples, CurveTerms terms, int folds) {
  std::vector<double> out;
  if (folds < 2 || samples.size() < static_cast<size_t>(folds)) return out;
  for (int f = 0; f < folds; ++f) {
    std::vector<KernelSample> train, test;
    for (size_t i = 0; i < samples.size(); ++i) (static_cast<int>(i % folds) == f ? test : train).push_back(samples[i]);
    const std::vector<double> e = relative_errors(fit_kernel_curve(train, terms), test);
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

double median_abs(std::vector<double> errors) {
  if (errors.empty()) return 0;
  for (double& e : errors) e = std::fabs(e);
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  return errors[errors.size() / 2];
}

std::vector<double> relative_errors(const KernelCurve& curve, const std::vector<KernelSample>& samples) {
  std::vector<double> out;
  for (const auto& x : samples)
    if (x.us > 0) out.push_back(curve.us(x.k, x.flops, x.bytes) / x.us - 1);
  return out;
}

}  // namespace modelcost
