#include "hardware/edit_distance.h"

#include <gtest/gtest.h>

namespace modelcost {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("h100", "h100"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("a100", "h100"), 1u);        // one substitution
  EXPECT_EQ(edit_distance("h100-sxm", "h100sxm"), 1u);  // one deletion
  EXPECT_EQ(edit_distance("dmi", "dim"), 2u);           // a swap is two edits
}

}  // namespace
}  // namespace modelcost
