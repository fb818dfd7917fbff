// The sampling loop every backend shares: take samples until the stopping criterion is met, then
// report their statistics as a NodeMeasurement / ModelMeasurement. Header-only so the CUDA
// library (linked after modelcost_core) can use it without pulling extra core objects.
#pragma once
#include <chrono>
#include <vector>

#include "measure/statistics.h"
#include "measure/stopping_criterion.h"
#include "modelcost/measure.h"

namespace modelcost {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Adds take_sample()'s values (microseconds) until the criterion is done; its clock starts now.
template <typename TakeSample>
void sample_until_done(StoppingCriterion& criterion, TakeSample take_sample) {
  const auto start = SteadyClock::now();
  while (!criterion.done(seconds_since(start))) criterion.add_sample(take_sample());
}

// A measured NodeMeasurement carrying the statistics of samples in microseconds.
inline NodeMeasurement measurement_of(const std::vector<double>& samples_us) {
  const SampleStatistics s = summarize(samples_us);
  NodeMeasurement m;
  m.measured = true;
  m.median_us = s.median;
  m.min_us = s.min;
  m.max_us = s.max;
  m.mean_us = s.mean;
  m.rel_stddev = s.rel_stddev;
  m.samples = s.count;
  return m;
}

// Marks a whole-model result measured with the timing of m (the whole model as one sample set).
inline void set_model_timing(ModelMeasurement& result, const NodeMeasurement& m) {
  result.measured = true;
  result.median_us = m.median_us;
  result.min_us = m.min_us;
  result.max_us = m.max_us;
  result.rel_stddev = m.rel_stddev;
  result.samples = m.samples;
}

}  // namespace modelcost
