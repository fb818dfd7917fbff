#include "measure/convergence.h"

#include <algorithm>
#include <cmath>

#include "measure/statistics.h"

namespace modelcost {

double SpreadTest::noise(const std::vector<double>& sorted) const { return summarize(sorted).rel_stddev; }

double MedianErrorTest::noise(const std::vector<double>& sorted) const {
  const size_t n = sorted.size();
  if (n < 2) return INFINITY;
  const size_t mid = n / 2;
  const double median = n % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  if (median <= 0) return 0;
  // Ranks (1-based) of the interval's ends: the binomial(n, 1/2) quantiles by the normal
  // approximation, clamped to the samples.
  const double reach = 0.98 * std::sqrt(static_cast<double>(n));
  const auto lower = static_cast<size_t>(std::max(1.0, std::floor(0.5 * static_cast<double>(n) - reach)));
  const auto upper = static_cast<size_t>(std::min(static_cast<double>(n), std::ceil(0.5 * static_cast<double>(n) + reach + 1)));
  return (sorted[upper - 1] - sorted[lower - 1]) / (2 * 1.96) / median;
}

std::unique_ptr<ConvergenceTest> make_convergence_test(Convergence convergence) {
  if (convergence == Convergence::kSpread) return std::make_unique<SpreadTest>();
  return std::make_unique<MedianErrorTest>();
}

}  // namespace modelcost
