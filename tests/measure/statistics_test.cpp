#include "measure/statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace modelcost {

TEST(MeasureStatistics, OddCountMedianMinMaxStddev) {
  // 1, 2, 3, 4, 10: mean 4, squared deviations 9+4+1+0+36 = 50, /4 = 12.5.
  const SampleStatistics s = summarize({10, 2, 4, 1, 3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(s.rel_stddev, std::sqrt(12.5) / 4);
  EXPECT_DOUBLE_EQ(s.rel_spread, 9.0 / 3.0);
}

TEST(MeasureStatistics, EvenCountMedianIsMidpoint) {
  const SampleStatistics s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
}

TEST(MeasureStatistics, SingleAndEmpty) {
  const SampleStatistics one = summarize({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(one.rel_stddev, 0);
  const SampleStatistics none = summarize({});
  EXPECT_EQ(none.count, 0);
  EXPECT_DOUBLE_EQ(none.median, 0);
  EXPECT_DOUBLE_EQ(none.rel_spread, 0);
}

TEST(MeasureStatistics, ConstantSamplesHaveNoSpread) {
  const SampleStatistics s = summarize(std::vector<double>(12, 5.0));
  EXPECT_DOUBLE_EQ(s.rel_stddev, 0);
  EXPECT_DOUBLE_EQ(s.rel_spread, 0);
}

}  // namespace modelcost
