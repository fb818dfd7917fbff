#include "measure/stopping_criterion.h"

#include <gtest/gtest.h>

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

TEST(MeasureStoppingCriterion, NoisySamplesRunUntilTheTimeLimit) {
  StoppingCriterion c({10, 0.005, 1.0, 1000});
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
