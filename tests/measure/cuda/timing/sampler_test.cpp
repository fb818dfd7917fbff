// quick_median_us's memo (host only): a figure kept in a backend's timing state is returned
// without running the launch, and the reuse is counted in that state's ledger.
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::testing {
namespace {

TEST(MeasureTiming, QuickMedianReusesTheFigureKeptInItsStateWithoutRunning) {
  cuda::Timing timing;
  timing.candidate_medians["conv|algo 1"] = 12.5;
  int launches = 0;
  const double us = cuda::quick_median_us(timing, [&](cudaStream_t) { ++launches; }, nullptr, "conv|algo 1");
  EXPECT_EQ(us, 12.5);
  EXPECT_EQ(launches, 0);
  const auto entries = timing.ledger.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, "timed choices: candidates reused (count)");
  EXPECT_EQ(entries[0].second, 1);
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
