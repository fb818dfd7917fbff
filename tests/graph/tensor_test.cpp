// Shape helpers of src/graph/tensor.cpp.
#include <gtest/gtest.h>

#include "modelcost/tensor.h"

namespace modelcost::testing {

TEST(Tensor, RowsViewIsAnotherShapeOfTheSameRowsEndingInTheirChannels) {
  // LeViT's BatchNorm over [B*N, C] beside a chain over [B, N, C].
  EXPECT_TRUE(is_rows_view({392, 128}, {2, 196, 128}));
  EXPECT_TRUE(is_rows_view({392, 128}, {4, 98, 128}));
  EXPECT_FALSE(is_rows_view({392, 128}, {392, 128}));      // the rows themselves
  EXPECT_FALSE(is_rows_view({392, 128}, {2, 128, 196}));   // channels not last
  EXPECT_FALSE(is_rows_view({392, 128}, {2, 196, 64}));    // fewer elements
  EXPECT_FALSE(is_rows_view({2, 196, 128}, {392, 128}));   // not rows
  EXPECT_FALSE(is_rows_view({392, 128}, {}));
}

}  // namespace modelcost::testing
