// Summary statistics of timed samples: what every measurement reports.
#pragma once
#include <vector>

namespace modelcost {

struct SampleStatistics {
  int count = 0;
  double median = 0, min = 0, max = 0, mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1)
  double rel_stddev = 0;  // stddev / mean; 0 when the mean is 0
  double rel_spread = 0;  // (max - min) / median; 0 when the median is 0
};

// Statistics of the samples (any order). All zero for an empty list.
SampleStatistics summarize(const std::vector<double>& samples);

}  // namespace modelcost
