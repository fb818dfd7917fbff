// When to stop sampling: nvbench's "stdrel" criterion. At least min_samples samples, then stop
// as soon as the relative standard deviation drops below max_rel_stddev, or when the time
// budget is spent (the result then reports the spread it reached), or at max_samples.
#pragma once
#include <vector>

namespace modelcost {

struct StoppingRule {
  int min_samples = 10;
  double max_rel_stddev = 0.005;
  double max_seconds = 0.25;
  int max_samples = 100000;
};

class StoppingCriterion {
 public:
  explicit StoppingCriterion(const StoppingRule& rule) : rule_(rule) {}

  void add_sample(double value) { samples_.push_back(value); }
  // elapsed_seconds: wall time spent sampling so far (the caller's clock, so tests can drive it).
  bool done(double elapsed_seconds) const;
  // Why sampling stopped: "converged", "time limit", "sample limit", or "" while not done.
  const char* reason(double elapsed_seconds) const;
  // Samples to take before the next check: enough to reach min_samples, else a batch sized so
  // checks (host synchronisations) stay a small share of the time. sample_seconds: typical sample time.
  int next_batch(double sample_seconds) const;
  const std::vector<double>& samples() const { return samples_; }

 private:
  bool converged() const;
  StoppingRule rule_;
  std::vector<double> samples_;
};

}  // namespace modelcost
