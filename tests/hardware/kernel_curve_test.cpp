// Kernel curves: the formula, and the fit recovering known terms from samples made with them.
#include <gtest/gtest.h>

#include <cmath>

#include "modelcost/kernel_curve_fit.h"

namespace modelcost::testing {
namespace {

TEST(KernelCurve, FixedCostPlusKLoopPlusTheSlowerThroughputTerm) {
  KernelCurve c;
  c.fixed_us = 4;
  c.k_us_per_1000 = 0.5;
  c.tflops = 100;
  c.gbps = 1000;
  EXPECT_DOUBLE_EQ(c.latency_us(2000), 5);
  // 1e9 FLOPs at 100 TF = 10 us; 1e6 B at 1000 GB/s = 1 us: the FLOP term counts.
  EXPECT_DOUBLE_EQ(c.us(2000, 1e9, 1e6), 15);
  // 1e7 B = 10 us beats 1e8 FLOPs = 1 us.
  EXPECT_DOUBLE_EQ(c.us(0, 1e8, 1e7), 14);
  KernelCurve bytes_only;
  bytes_only.fixed_us = 3;
  bytes_only.gbps = 2000;
  EXPECT_DOUBLE_EQ(bytes_only.us(0, 1e12, 4e6), 5);  // no FLOP term
}

// With a knee p the two throughput terms combine as (c^p + m^p)^(1/p): at the ridge point (c = m)
// 2^(1/p) times either, far from it the larger one.
TEST(KernelCurve, AKneeCombinesTheThroughputTermsAsTheirPNorm) {
  KernelCurve c{0, 0, 100, 1000, 2};  // fixed_us, k_us_per_1000, tflops, gbps, knee
  EXPECT_NEAR(c.us(0, 1e9, 1e7), std::sqrt(200.0), 1e-9);  // 10 us of math, 10 us of traffic
  EXPECT_NEAR(c.us(0, 1e9, 1e4), 10, 1e-3);                // traffic 0.01 us: the math alone
  c.knee = 0;
  EXPECT_DOUBLE_EQ(c.us(0, 1e9, 1e7), 10);
}

// A 1x1 conv of few input channels streams its traffic slower: x (1 + k_half / K).
TEST(KernelCurve, AShortReductionStreamsItsTrafficSlower) {
  KernelCurve c;
  c.fixed_us = 2;
  c.gbps = 1000;
  c.k_half = 32;
  EXPECT_DOUBLE_EQ(c.us(32, 0, 1e7), 2 + 20);      // K = k_half: half the bandwidth
  EXPECT_DOUBLE_EQ(c.us(3200, 0, 1e7), 2 + 10.1);  // deep products: barely slower
  EXPECT_DOUBLE_EQ(c.memory_us(1e7, 0), 10);       // depth unknown: no slowdown
}

std::vector<KernelSample> samples_of(const KernelCurve& truth) {
  std::vector<KernelSample> out;
  for (double k : {64.0, 512.0, 4096.0})
    for (double flops : {1e6, 1e8, 1e10, 1e12})
      for (double bytes : {1e4, 1e6, 1e8}) out.push_back({k, flops, bytes, truth.us(k, flops, bytes)});
  return out;
}

TEST(KernelCurve, FitRecoversTheTermsOfExactSamples) {
  KernelCurve truth;
  truth.fixed_us = 4.5;
  truth.k_us_per_1000 = 0.8;
  truth.tflops = 600;
  truth.gbps = 2500;
  const KernelCurve fit = fit_kernel_curve(samples_of(truth), CurveTerms::kMatrix);
  // The throughputs are searched on a grid of 144 steps over 0.5..2000 TF and 96 over 100..20000
  // GB/s (about 6 % apart): the fit lands within a step, and the samples within a few percent.
  EXPECT_NEAR(fit.tflops / truth.tflops, 1, 0.06);
  EXPECT_NEAR(fit.gbps / truth.gbps, 1, 0.06);
  EXPECT_NEAR(fit.fixed_us, 4.5, 0.3);
  EXPECT_NEAR(fit.k_us_per_1000, 0.8, 0.1);
  for (double e : relative_errors(fit, samples_of(truth))) EXPECT_LT(std::fabs(e), 0.06);
}

// Samples near the ridge point made with a soft knee: the fit finds that knee (of 0, 4 and 2) and the
// terms; a sharp roofline's samples keep the max (FitRecoversTheTermsOfExactSamples).
TEST(KernelCurve, FitFindsTheKneeOfSamplesNearTheRidgePoint) {
  const KernelCurve truth{3, 0.5, 500, 2000, 2};  // fixed_us, k_us_per_1000, tflops, gbps, knee
  std::vector<KernelSample> s;
  for (double k : {256.0, 2048.0})
    for (double flops : {1e8, 1e9, 1e10, 1e11})
      for (double intensity : {50.0, 150.0, 250.0, 400.0, 1000.0})
        s.push_back({k, flops, flops / intensity, truth.us(k, flops, flops / intensity)});
  const KernelCurve fit = fit_kernel_curve(s, CurveTerms::kMatrix);
  EXPECT_EQ(fit.knee, 2);
  EXPECT_NEAR(fit.tflops / truth.tflops, 1, 0.06);
  EXPECT_NEAR(fit.gbps / truth.gbps, 1, 0.06);
  for (double e : relative_errors(fit, s)) EXPECT_LT(std::fabs(e), 0.06);
  EXPECT_EQ(fit_kernel_curve(samples_of(KernelCurve{4, 0, 600, 2500}), CurveTerms::kMatrix).knee, 0);
}

// Samples of 1x1 convs from 16 to 1024 channels deep made with a short-reduction slowdown: the fit
// of a class with that term finds it; the same class's deep products alone do not ask for it.
TEST(KernelCurve, FitFindsTheShortReductionSlowdownWhereTheSamplesShowIt) {
  const KernelCurve truth{2.5, 1, 700, 3000, 0, 32};  // fixed_us, k_us_per_1000, tflops, gbps, knee, k_half
  std::vector<KernelSample> s;
  for (double k : {16.0, 24.0, 64.0, 256.0, 1024.0})
    for (double bytes : {1e6, 1e7, 1e8}) s.push_back({k, bytes * k / 64, bytes, truth.us(k, bytes * k / 64, bytes)});
  EXPECT_EQ(curve_terms("conv1x1"), CurveTerms::kMatrixShortReduction);
  const KernelCurve fit = fit_kernel_curve(s, CurveTerms::kMatrixShortReduction);
  EXPECT_EQ(fit.k_half, 32);
  for (double e : relative_errors(fit, s)) EXPECT_LT(std::fabs(e), 0.06);
  EXPECT_EQ(fit_kernel_curve(s, CurveTerms::kMatrix).k_half, 0);  // a class without the term
  EXPECT_EQ(fit_kernel_curve(samples_of(KernelCurve{4, 0.5, 600, 2500}), CurveTerms::kMatrixShortReduction).k_half, 0);
}

// A wave class (decode_attention): K counts 1000 per wave, and the FLOP and byte terms add up. The
// fit keeps knee 1 and recovers the per-wave cost from samples of one to four waves.
TEST(KernelCurve, AWaveClassAddsItsTermsAndPaysPerWave) {
  EXPECT_EQ(curve_terms("decode_attention"), CurveTerms::kWaves);
  EXPECT_TRUE(curve_has_work_terms("decode_attention"));
  EXPECT_FALSE(curve_has_work_terms("decode_norm"));
  const KernelCurve truth{4, 3.5, 16, 4000, 1};  // fixed_us, us per wave, tflops, gbps, knee
  EXPECT_DOUBLE_EQ(truth.us(2000, 16e6, 4e6), 4 + 7 + 1 + 1);
  std::vector<KernelSample> s;
  for (double waves : {1.0, 2.0, 3.0, 4.0})
    for (double flops : {1e7, 1e8, 1e9})
      for (double bytes : {1e6, 3e7, 3e8}) s.push_back({1000 * waves, flops * waves, bytes, truth.us(1000 * waves, flops * waves, bytes)});
  const KernelCurve fit = fit_kernel_curve(s, CurveTerms::kWaves);
  EXPECT_EQ(fit.knee, 1);
  EXPECT_NEAR(fit.k_us_per_1000, 3.5, 0.3);
  EXPECT_NEAR(fit.tflops / truth.tflops, 1, 0.06);
  EXPECT_NEAR(fit.gbps / truth.gbps, 1, 0.06);
  for (double e : relative_errors(fit, s)) EXPECT_LT(std::fabs(e), 0.06);
}

TEST(KernelCurve, ByteClassesFitNoKLoopOrFlopTerm) {
  KernelCurve truth;
  truth.fixed_us = 3;
  truth.gbps = 3000;
  std::vector<KernelSample> s;
  for (double bytes : {1e4, 1e5, 1e6, 1e7, 1e8, 1e9}) s.push_back({0, bytes / 4, bytes, truth.us(0, 0, bytes)});
  const KernelCurve fit = fit_kernel_curve(s, CurveTerms::kBytes);
  EXPECT_EQ(fit.tflops, 0);
  EXPECT_EQ(fit.k_us_per_1000, 0);
  EXPECT_NEAR(fit.gbps / 3000, 1, 0.06);
  EXPECT_NEAR(fit.fixed_us, 3, 0.2);
  EXPECT_TRUE(fit_kernel_curve({}, CurveTerms::kMatrix).empty());
}

// Held out: samples on one curve are predicted from the others within the fit's few percent; one
// sample off the curve (2x) is predicted far from its time, and the median says what is typical.
TEST(KernelCurve, HeldOutErrorsPredictEachSampleFromTheOthers) {
  KernelCurve truth;
  truth.fixed_us = 4.5;
  truth.k_us_per_1000 = 0.8;
  truth.tflops = 600;
  truth.gbps = 2500;
  std::vector<KernelSample> samples = samples_of(truth);
  const std::vector<double> clean = held_out_errors(samples, CurveTerms::kMatrix);
  ASSERT_EQ(clean.size(), samples.size());
  for (double e : clean) EXPECT_LT(std::fabs(e), 0.08);
  samples.front().us *= 2;
  const std::vector<double> noisy = held_out_errors(samples, CurveTerms::kMatrix);
  EXPECT_LT(noisy.front(), -0.3);  // sample 0 opens fold 0: predicted at about half its doubled time
  EXPECT_LT(median_abs(noisy), 0.1);
  EXPECT_TRUE(held_out_errors({}, CurveTerms::kMatrix).empty());
}

}  // namespace
}  // namespace modelcost::testing
