#include "measure/stopping_criterion.h"

#include <gtest/gtest.h>

#include <cmath>

namespace modelcost {

TEST(MeasureStoppingCriterion, NeedsMinimumSamplesEvenWhenStable) {
  StoppingCriterion c({10, 0.005, 1.0, 1000});
  for (int i = 0; i < 9; ++i) c.add_sample(100);
  EXPECT_FALSE(c.done(0.0));
  EXPECT_FALSE(c.done(5.0));  // the time limit never cuts below the minimum count
  c.add_sample(100);
  EXPECT_TRUE(c.done(0.0));
  EXPECT_STREQ(c.reason(0.0), "converged");
}

TEST(MeasureStoppingCriterion, NoisySamplesRunUntilTheTimeLimitUnderTheSpreadRule) {
  StoppingCriterion c({10, 0.005, 1.0, 1000, Convergence::kSpread});
  // Alternating 100 / 102: mean 101, stddev ~1.05 -> ~1.04% relative, above 0.5%.
  for (int i = 0; i < 20; ++i) c.add_sample(i % 2 ? 102 : 100);
  EXPECT_FALSE(c.done(0.5));
  EXPECT_TRUE(c.done(1.0));
  EXPECT_STREQ(c.reason(1.0), "time limit");
}

TEST(MeasureStoppingCriterion, ConvergesBelowThreshold) {
  StoppingCriterion c({10, 0.005, 1.0, 1000});
  // 100 and 100.5 alternating: stddev ~0.256 over mean 100.25 -> 0.26%.
  for (int i = 0; i < 10; ++i) c.add_sample(i % 2 ? 100.5 : 100);
  EXPECT_TRUE(c.done(0.0));
  EXPECT_STREQ(c.reason(0.0), "converged");
}

TEST(MeasureStoppingCriterion, SampleLimit) {
  StoppingCriterion c({2, 0.0001, 100.0, 5});
  for (int i = 0; i < 5; ++i) c.add_sample(i + 1);
  EXPECT_STREQ(c.reason(0.0), "sample limit");
}

TEST(MeasureStoppingCriterion, JitterConvergesUnderTheMedianErrorRuleOnceThereAreEnoughSamples) {
  // Runs jittering by about +-2 % around 100 (a deterministic spread, 2 % stddev): the spread
  // rule never converges, the median's standard error falls as 1 / sqrt(n).
  auto jitter = [](int i) { return 100 + 3.4 * std::sin(1.7 * i); };
  StoppingCriterion spread({10, 0.005, 1.0, 100000, Convergence::kSpread});
  StoppingCriterion median({10, 0.005, 1.0, 100000, Convergence::kMedianError});
  int converged_at = 0;
  for (int i = 0; i < 400; ++i) {
    spread.add_sample(jitter(i));
    median.add_sample(jitter(i));
    if (!converged_at && median.done(0.0)) converged_at = i + 1;
  }
  EXPECT_FALSE(spread.done(0.5));
  EXPECT_STREQ(median.reason(0.0), "converged");
  EXPECT_GT(converged_at, 20);  // not at the first check: ten samples pin a 2 % jitter to ~1 %
  EXPECT_LT(converged_at, 200);
}

TEST(MeasureStoppingCriterion, OutliersDoNotHoldTheMedianErrorRuleBack) {
  // Steady 50 us runs with one preempted sample in ten at 5x: the stddev is ~2x the mean.
  StoppingCriterion spread({10, 0.005, 1.0, 100000, Convergence::kSpread});
  StoppingCriterion median({10, 0.005, 1.0, 100000, Convergence::kMedianError});
  for (int i = 0; i < 30; ++i) {
    const double us = i % 10 == 3 ? 250 : 50 + 0.01 * (i % 4);
    spread.add_sample(us);
    median.add_sample(us);
  }
  EXPECT_FALSE(spread.done(0.0));
  EXPECT_TRUE(median.done(0.0));
  EXPECT_LT(median.noise(), 0.001);
}

TEST(MeasureStoppingCriterion, TwoEqualModesKeepTheMedianUncertain) {
  // Half the runs at 100, half at 110: the median lies anywhere between, so no count converges.
  StoppingCriterion median({10, 0.005, 1.0, 100000, Convergence::kMedianError});
  for (int i = 0; i < 1000; ++i) median.add_sample(i % 2 ? 110 : 100);
  EXPECT_FALSE(median.done(0.5));
  EXPECT_STREQ(median.reason(1.0), "time limit");
}

TEST(MeasureStoppingCriterion, BatchSizes) {
  StoppingCriterion c({10, 0.005, 1.0, 1000});
  EXPECT_EQ(c.next_batch(0.0), 10);  // first reach the minimum
  for (int i = 0; i < 10; ++i) c.add_sample(i + 1);
  EXPECT_EQ(c.next_batch(1e-3), 10);   // 10 ms of samples per check
  EXPECT_EQ(c.next_batch(1e-6), 100);  // capped at 100
  EXPECT_EQ(c.next_batch(0.5), 1);
  StoppingCriterion near_limit({1, 0.0, 1.0, 12});
  for (int i = 0; i < 10; ++i) near_limit.add_sample(i);
  EXPECT_EQ(near_limit.next_batch(1e-6), 2);  // never past max_samples
}

}  // namespace modelcost
