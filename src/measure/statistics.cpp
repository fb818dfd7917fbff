#include "measure/statistics.h"

#include <algorithm>
#include <cmath>

namespace modelcost {

SampleStatistics summarize(const std::vector<double>& samples) {
  SampleStatistics s;
  s.count = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  s.rel_stddev = s.mean != 0 ? s.stddev / s.mean : 0;
  s.rel_spread = s.median != 0 ? (s.max - s.min) / s.median : 0;
  return s;
}

}  // namespace modelcost
