// quick_median_us's memo (host only): a figure kept in a backend's timing state is returned
// without running the launch, and the reuse is counted in that state's ledger. On a GPU: a
// candidate whose first timed launch is past the bound stops there, a long one at its warm-up.
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include <functional>
#include <string>

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

// A candidate that spins on the GPU for a set time each launch, counting its launches.
class SpinCandidate {
 public:
  explicit SpinCandidate(unsigned spin_ns) : spin_ns_(spin_ns) {}
  std::function<void(cudaStream_t)> launch() {
    return [this](cudaStream_t s) {
      ++launches;
      cuda::launch_timestamp_kernel(static_cast<unsigned long long*>(stamps_.data()), 0, spin_ns_, s);
    };
  }
  int launches = 0;

 private:
  unsigned spin_ns_;
  cuda::DeviceBuffer stamps_{2 * sizeof(unsigned long long)};
};

// The candidates' launches are counted only where CUPTI times them (CUDA events take no warm-ups).
bool can_count_launches(cuda::Timing& timing, std::string* why) {
  if (!cuda_device_available()) *why = "no NVIDIA GPU";
  else if (!timing.cupti().ok()) *why = "CUPTI is off: CUDA events time each launch, without warm-ups to count";
  return why->empty();
}

// A 50 us spin against a fastest candidate of 1 us: one warm-up and one timed launch, where the
// same candidate without a bound runs two warm-ups and at least five samples.
TEST(MeasureTiming, QuickMedianGivesUpOnACandidatePastTheFastest) {
  cuda::Timing timing;
  std::string why;
  if (!can_count_launches(timing, &why)) GTEST_SKIP() << why;
  SpinCandidate spin(50000);
  const double bounded_us = cuda::quick_median_us(timing, spin.launch(), nullptr, {{}, 1.0});
  EXPECT_EQ(spin.launches, 2);
  EXPECT_GT(bounded_us, 40);
  spin.launches = 0;
  const double free_us = cuda::quick_median_us(timing, spin.launch(), nullptr);
  EXPECT_GE(spin.launches, 7);
  EXPECT_NEAR(free_us, bounded_us, 0.2 * free_us);
}

// A 300 us spin against a fastest candidate of 100 us: the bound (150 us) is long enough for the
// warm-up launch to be the timed one, so the candidate costs that one launch; against a fastest of
// 250 us it is a contender and is sampled as usual.
TEST(MeasureTiming, QuickMedianGivesUpOnALongCandidateAtItsWarmUp) {
  cuda::Timing timing;
  std::string why;
  if (!can_count_launches(timing, &why)) GTEST_SKIP() << why;
  SpinCandidate spin(300000);
  const double given_up_us = cuda::quick_median_us(timing, spin.launch(), nullptr, {{}, 100.0});
  EXPECT_EQ(spin.launches, 1);
  EXPECT_GT(given_up_us, 250);
  spin.launches = 0;
  const double contender_us = cuda::quick_median_us(timing, spin.launch(), nullptr, {{}, 250.0});
  EXPECT_GE(spin.launches, 6);
  EXPECT_NEAR(contender_us, given_up_us, 0.2 * contender_us);
  bool counted = false;
  for (const auto& [entry, value] : timing.ledger.entries())
    counted |= entry == "timed choices: candidates given up at their warm-up (count)" && value == 1;
  EXPECT_TRUE(counted);
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
