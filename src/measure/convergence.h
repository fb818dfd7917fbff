// When a set of timing samples is precise enough: the convergence tests a stopping rule can use
// (strategies; stopping_criterion.h adds the sample and time limits around them).
#pragma once
#include <memory>
#include <vector>

#include "modelcost/measure.h"

namespace modelcost {

class ConvergenceTest {
 public:
  virtual ~ConvergenceTest() = default;
  // The test's noise figure of `sorted` (ascending samples, at least two), relative to the figure
  // reported: converged once it is below the rule's max_noise.
  virtual double noise(const std::vector<double>& sorted) const = 0;
};

// nvbench's "stdrel": the samples' relative standard deviation. It measures the spread of the
// samples, not the precision of their median, so a kernel whose runs jitter by 1-3 % never
// reaches 0.5 % and samples until the time limit however many samples it has.
class SpreadTest : public ConvergenceTest {
 public:
  double noise(const std::vector<double>& sorted) const override;
};

// The relative standard error of the median, distribution-free: the half-width of the ~95 %
// confidence interval of the median between the order statistics n/2 -+ 0.98 sqrt(n), over
// 1.96, over the median. It shrinks as 1/sqrt(n) however noisy each run is, and outliers (a
// preempted sample, a clock step) move it no more than any other sample beyond the interval.
class MedianErrorTest : public ConvergenceTest {
 public:
  double noise(const std::vector<double>& sorted) const override;
};

std::unique_ptr<ConvergenceTest> make_convergence_test(Convergence convergence);

}  // namespace modelcost
