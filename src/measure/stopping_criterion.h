// When to stop sampling, after nvbench's stopping criteria: at least min_samples samples, then
// stop as soon as the convergence test (convergence.h: the median's standard error, or the
// samples' spread as nvbench's "stdrel") is below max_noise, or when the time budget is spent
// (the result then reports the spread it reached), or at max_samples.
#pragma once
#include <memory>
#include <vector>

#include "measure/convergence.h"

namespace modelcost {

struct StoppingRule {
  int min_samples = 10;
  double max_noise = 0.005;
  double max_seconds = 0.25;
  int max_samples = 100000;
  Convergence convergence = Convergence::kMedianError;
};

class StoppingCriterion {
 public:
  explicit StoppingCriterion(const StoppingRule& rule) : rule_(rule), test_(make_convergence_test(rule.convergence)) {}

  void add_sample(double value) { samples_.push_back(value); }
  // elapsed_seconds: wall time spent sampling so far (the caller's clock, so tests can drive it).
  bool done(double elapsed_seconds) const;
  // Why sampling stopped: "converged", "time limit", "sample limit", or "" while not done.
  const char* reason(double elapsed_seconds) const;
  // Samples to take before the next check: enough to reach min_samples, else a batch sized so
  // checks (host synchronisations) stay a small share of the time. sample_seconds: typical sample time.
  int next_batch(double sample_seconds) const;
  const std::vector<double>& samples() const { return samples_; }
  // The convergence test's figure for the samples so far (infinite below two samples).
  double noise() const;

 private:
  bool converged() const;
  StoppingRule rule_;
  std::shared_ptr<const ConvergenceTest> test_;
  std::vector<double> samples_;
};

}  // namespace modelcost
