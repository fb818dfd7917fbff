// quick_median_us's memo (host only): a figure kept in a backend's timing state is returned
// without running the launch, and the reuse is counted in that state's ledger. On a GPU: a
// candidate whose first timed launch is past the bound stops there, a long one at its warm-up.
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include "core/device_buffer.h"
#include "core/kernels.h"
#include "measure/cuda_entry.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::testing {
namespace {

TEST(MeasureTiming, QuickMedianReusesTheFigureKeptInItsStateWithoutRunning) {
  cuda::Timing timing;
  timing.candidate_medians["conv|algo 1"] = 12.5;
  int launches = 0;
  const double us = cuda::quick_median_us(timing, [&](cudaStream_t) { ++launches; }, nullptr, {"conv|algo 1"});
  EXPECT_EQ(us, 12.5);
  EXPECT_EQ(launches, 0);
  const auto entries = timing.ledger.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, "timed choices: candidates reused (count)");
  EXPECT_EQ(entries[0].second, 1);
}

// A 50 us spin against a fastest candidate of 1 us: one warm-up and one timed launch, where the
// same candidate without a bound runs two warm-ups and at least five samples.
TEST(MeasureTiming, QuickMedianGivesUpOnACandidatePastTheFastest) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  cuda::Timing timing;
  if (!timing.cupti().ok()) GTEST_SKIP() << "CUPTI is off: CUDA events time each launch, without warm-ups to count";
  cuda::DeviceBuffer stamps(2 * sizeof(unsigned long long));
  int launches = 0;
  auto spin = [&](cudaStream_t s) {
    ++launches;
    cuda::launch_timestamp_kernel(static_cast<unsigned long long*>(stamps.data()), 0, 50000, s);
  };
  const double bounded_us = cuda::quick_median_us(timing, spin, nullptr, {{}, 1.0});
  EXPECT_EQ(launches, 2);
  EXPECT_GT(bounded_us, 40);
  launches = 0;
  const double free_us = cuda::quick_median_us(timing, spin, nullptr);
  EXPECT_GE(launches, 7);
  EXPECT_NEAR(free_us, bounded_us, 0.2 * free_us);
}

// A 300 us spin against a fastest candidate of 100 us: the bound (150 us) is long enough for the
// warm-up launch to be the timed one, so the candidate costs that one launch; against a fastest of
// 250 us it is a contender and is sampled as usual.
TEST(MeasureTiming, QuickMedianGivesUpOnALongCandidateAtItsWarmUp) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  cuda::Timing timing;
  if (!timing.cupti().ok()) GTEST_SKIP() << "CUPTI is off: CUDA events time each launch, without warm-ups to count";
  cuda::DeviceBuffer stamps(2 * sizeof(unsigned long long));
  int launches = 0;
  auto spin = [&](cudaStream_t s) {
    ++launches;
    cuda::launch_timestamp_kernel(static_cast<unsigned long long*>(stamps.data()), 0, 300000, s);
  };
  const double given_up_us = cuda::quick_median_us(timing, spin, nullptr, {{}, 100.0});
  EXPECT_EQ(launches, 1);
  EXPECT_GT(given_up_us, 250);
  launches = 0;
  const double contender_us = cuda::quick_median_us(timing, spin, nullptr, {{}, 250.0});
  EXPECT_GE(launches, 6);
  EXPECT_NEAR(contender_us, given_up_us, 0.2 * contender_us);
  bool counted = false;
  for (const auto& [entry, value] : timing.ledger.entries())
    counted |= entry == "timed choices: candidates given up at their warm-up (count)" && value == 1;
  EXPECT_TRUE(counted);
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
