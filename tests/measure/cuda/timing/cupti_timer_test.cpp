// One CuptiTimer at a time receives CUPTI's records (its buffer callbacks are process-global): a
// second live timer stays off and says why, and once the first is gone a new one attaches. Runs
// without a GPU too (then the first timer's own attach may fail, which changes nothing here).
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "timing/cupti_timer.h"
#include "timing/wall_ledger.h"

namespace modelcost::testing {
namespace {

bool cupti_turned_off() {
  const char* env = std::getenv("MODELCOST_CUPTI");
  return env && std::string(env) == "0";
}

TEST(MeasureCuptiTimer, SecondLiveTimerStaysOffUntilTheFirstIsGone) {
  if (cupti_turned_off()) GTEST_SKIP() << "MODELCOST_CUPTI=0: no timer attaches";
  cuda::WallLedger ledger;
  std::optional<cuda::CuptiTimer> first(std::in_place, ledger);
  const cuda::CuptiTimer second(ledger);
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.error().find("another CuptiTimer is live"), std::string::npos) << second.error();
  const bool first_attached = first->ok();  // false without a GPU
  first.reset();
  const cuda::CuptiTimer third(ledger);
  EXPECT_EQ(third.error().find("another CuptiTimer is live"), std::string::npos) << third.error();
  if (first_attached) EXPECT_TRUE(third.ok()) << "CUPTI did not attach again: " << third.error();
}

TEST(MeasureCuptiTimer, BooksItsStartAndGivesFreshExternalIds) {
  cuda::WallLedger ledger;
  cuda::CuptiTimer timer(ledger);
  const auto entries = ledger.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, "CUPTI start");
  const uint64_t a = timer.next_external_id(), b = timer.next_external_id();
  EXPECT_LT(a, b);
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
