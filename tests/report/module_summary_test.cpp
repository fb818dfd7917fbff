#include "report/module_summary.h"

#include <gtest/gtest.h>

namespace modelcost {
namespace {

Node named(const std::string& name) {
  Node n;
  n.name = name;
  return n;
}

TEST(ModuleSummary, ScopeIsTheNameWithoutItsLastComponent) {
  EXPECT_EQ(node_scope(named("/layer1/layer1.0/conv1/Conv")), "/layer1/layer1.0/conv1");
  EXPECT_EQ(node_scope(named("/Conv")), "");
  EXPECT_EQ(node_scope(named("Conv_0")), "");
  EXPECT_EQ(node_scope(named("encoder/layer0/MatMul")), "encoder/layer0");
}

TEST(ModuleSummary, DepthKeepsTheFirstComponents) {
  EXPECT_EQ(scope_at_depth("/layer1/layer1.0/conv1", 2), "/layer1/layer1.0");
  EXPECT_EQ(scope_at_depth("/layer1/layer1.0/conv1", 1), "/layer1");
  EXPECT_EQ(scope_at_depth("/layer1/layer1.0/conv1", 9), "/layer1/layer1.0/conv1");
  EXPECT_EQ(scope_at_depth("/layer1", 0), "");
  EXPECT_EQ(scope_at_depth("encoder/layer0", 1), "/encoder");  // always written from the root
  EXPECT_EQ(scope_at_depth("", 3), "");
  EXPECT_EQ(scope_at_depth("//a//b", 2), "/a/b");  // empty components do not count
}

}  // namespace
}  // namespace modelcost
