#include "report/torch_scope.h"

#include <gtest/gtest.h>

namespace modelcost {
namespace {

TEST(TorchScope, TheInnermostModuleOfNameScopes) {
  EXPECT_EQ(scope_of_name_scopes("['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']"), "/layer1/0/conv1");
  EXPECT_EQ(scope_of_name_scopes("['', 'trunk.block1-0', 'relu']"), "/trunk/block1-0");
}

TEST(TorchScope, TopLevelOpsHaveNoScope) {
  EXPECT_EQ(scope_of_name_scopes("['', 'view']"), "");
  EXPECT_EQ(scope_of_name_scopes("[]"), "");
  EXPECT_EQ(scope_of_name_scopes("not a list"), "");
}

TEST(TorchScope, QuotesInsideNamesAreKept) {
  EXPECT_EQ(scope_of_name_scopes("['', \"it's\", 'op']"), "/it's");
}

}  // namespace
}  // namespace modelcost
