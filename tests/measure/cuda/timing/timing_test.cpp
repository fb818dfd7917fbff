// A backend's timing state (host only): the kernel timer starts on first use, booked in the
// state's own ledger, not another's.
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include "timing/timing.h"

namespace modelcost::testing {
namespace {

TEST(MeasureTiming, KernelTimerStartsOnFirstUseInItsOwnLedger) {
  cuda::Timing timing, other;
  EXPECT_TRUE(timing.ledger.entries().empty()) << "CUPTI attached before anything was timed";
  cuda::CuptiTimer& timer = timing.cupti();
  EXPECT_EQ(&timing.cupti(), &timer) << "a second timer for the same backend";
  const auto entries = timing.ledger.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, "CUPTI start");
  EXPECT_TRUE(other.ledger.entries().empty());
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
