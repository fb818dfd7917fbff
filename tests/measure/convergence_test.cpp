#include "measure/convergence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace modelcost {

namespace {
std::vector<double> sorted_normal(int n, double mean, double sigma, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(mean, sigma);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST(MeasureConvergence, SpreadIsTheRelativeStandardDeviation) {
  const std::vector<double> sorted = {99, 100, 101};  // stddev 1, mean 100
  EXPECT_NEAR(SpreadTest().noise(sorted), 0.01, 1e-12);
}

TEST(MeasureConvergence, MedianErrorMatchesTheNormalTheoryForLargeSamples) {
  // For normal samples the median's standard error is sqrt(pi / 2) sigma / sqrt(n).
  const int n = 4000;
  const auto sorted = sorted_normal(n, 100, 2, 7);
  const double expected = std::sqrt(M_PI / 2) * 2 / std::sqrt(n) / 100;
  EXPECT_NEAR(MedianErrorTest().noise(sorted), expected, 0.15 * expected);
}

TEST(MeasureConvergence, MedianErrorShrinksWithTheSampleCount) {
  const double few = MedianErrorTest().noise(sorted_normal(25, 100, 2, 3));
  const double many = MedianErrorTest().noise(sorted_normal(400, 100, 2, 3));
  EXPECT_LT(many, few / 2.5);  // 1 / sqrt(16) = 1/4, with room for the samples' chance
}

TEST(MeasureConvergence, MedianErrorOfIdenticalSamplesIsZero) {
  EXPECT_EQ(MedianErrorTest().noise(std::vector<double>(12, 5.0)), 0.0);
  EXPECT_TRUE(std::isinf(MedianErrorTest().noise({5.0})));
}

TEST(MeasureConvergence, FactoryPicksTheNamedTest) {
  const std::vector<double> sorted = {90, 100, 100, 100, 100, 100, 100, 100, 100, 200};
  EXPECT_DOUBLE_EQ(make_convergence_test(Convergence::kSpread)->noise(sorted), SpreadTest().noise(sorted));
  EXPECT_DOUBLE_EQ(make_convergence_test(Convergence::kMedianError)->noise(sorted), MedianErrorTest().noise(sorted));
}

}  // namespace modelcost
