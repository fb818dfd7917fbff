// The wall-time ledger (host only): entries add up per name in first-seen order, a LedgerScope
// books its seconds into the ledger it was given, and two ledgers (two backends) never mix.
#ifdef MODELCOST_HAVE_CUDA
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "timing/wall_ledger.h"

namespace modelcost::testing {
namespace {

TEST(WallLedger, AddsUpEachEntryInFirstSeenOrder) {
  cuda::WallLedger ledger;
  ledger.add("nodes: sampling", 0.5);
  ledger.add("nodes (count)", 1);
  ledger.add("nodes: sampling", 0.25);
  ledger.add("nodes (count)", 2);
  const auto entries = ledger.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, "nodes: sampling");
  EXPECT_DOUBLE_EQ(entries[0].second, 0.75);
  EXPECT_EQ(entries[1].first, "nodes (count)");
  EXPECT_DOUBLE_EQ(entries[1].second, 3);
}

TEST(WallLedger, ScopeBooksItsSecondsIntoTheLedgerItWasGivenOnly) {
  cuda::WallLedger given, other;
  other.add("unrelated", 1);
  {
    cuda::LedgerScope phase(given, "phase");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(given.entries().empty()) << "booked before the scope ended";
  }
  const auto entries = given.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, "phase");
  EXPECT_GE(entries[0].second, 0.019);
  EXPECT_LT(entries[0].second, 5.0);
  ASSERT_EQ(other.entries().size(), 1u);
  EXPECT_EQ(other.entries()[0].first, "unrelated");
  EXPECT_DOUBLE_EQ(other.entries()[0].second, 1);
}

TEST(WallLedger, NestedScopesCountInBothPhases) {
  cuda::WallLedger ledger;
  {
    cuda::LedgerScope outer(ledger, "preparing");
    cuda::LedgerScope inner(ledger, "timed choices");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto entries = ledger.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, "timed choices");  // the inner scope ends first
  EXPECT_EQ(entries[1].first, "preparing");
  EXPECT_GE(entries[1].second, entries[0].second);
  EXPECT_GE(entries[0].second, 0.009);
}

}  // namespace
}  // namespace modelcost::testing
#endif  // MODELCOST_HAVE_CUDA
