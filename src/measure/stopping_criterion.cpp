#include "measure/stopping_criterion.h"

#include <algorithm>
#include <cmath>


namespace modelcost {

double StoppingCriterion::noise() const {
  if (samples_.size() < 2) return INFINITY;
  std::vector<double> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  return test_->noise(sorted);
}

bool StoppingCriterion::converged() const {
  if (static_cast<int>(samples_.size()) < rule_.min_samples) return false;
  return noise() < rule_.max_noise;
}

const char* StoppingCriterion::reason(double elapsed_seconds) const {
  if (converged()) return "converged";
  if (static_cast<int>(samples_.size()) >= rule_.max_samples) return "sample limit";
  // The time limit never cuts a measurement below the minimum sample count.
  if (static_cast<int>(samples_.size()) >= rule_.min_samples && elapsed_seconds >= rule_.max_seconds)
    return "time limit";
  return "";
}

bool StoppingCriterion::done(double elapsed_seconds) const { return *reason(elapsed_seconds) != '\0'; }

int StoppingCriterion::next_batch(double sample_seconds) const {
  const int have = static_cast<int>(samples_.size());
  if (have < rule_.min_samples) return rule_.min_samples - have;
  // About 10 ms of work per check, between 1 and 100 samples, never past max_samples.
  int batch = sample_seconds > 0 ? static_cast<int>(0.01 / sample_seconds) : 100;
  batch = std::clamp(batch, 1, 100);
  return std::min(batch, std::max(1, rule_.max_samples - have));
}

}  // namespace modelcost
