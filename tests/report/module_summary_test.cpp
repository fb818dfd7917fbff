#include "report/module_summary.h"

#include <gtest/gtest.h>

#include "report/report.h"
#include "test_support.h"

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

TEST(ModuleSummary, SumsCountsAndSharesPerModule) {
  testing::ModelBuilder b(17);
  b.input("x", testing::kFloat, Shape{1, 8});
  b.weight("w1", testing::kFloat, {8, 16});
  b.weight("w2", testing::kFloat, {16, 4});
  b.node("MatMul", {"x", "w1"}, {"h"}).set_name("/enc/fc1/MatMul");
  b.node("Relu", {"h"}, {"a"}).set_name("/enc/act/Relu");
  b.node("MatMul", {"a", "w2"}, {"y"}).set_name("/head/MatMul");
  b.output("y");
  auto run = testing::analyse(b);
  const Report report = build_report(run->analysis, "test");
  const ModuleSummary summary = summarize_by_module(report, 1);
  EXPECT_EQ(summary.share_name, "share_of_flops");
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_EQ(summary.rows[0].module, "/enc");
  EXPECT_EQ(summary.rows[0].count, 2u);
  EXPECT_EQ(summary.rows[1].module, "/head");
  EXPECT_EQ(summary.rows[1].count, 1u);
  const auto& nodes = run->analysis.nodes;
  const double enc = nodes[0].cost.flops + nodes[1].cost.flops, head = nodes[2].cost.flops;
  ASSERT_TRUE(summary.ranks());
  EXPECT_DOUBLE_EQ(summary.rows[0].sums[summary.rank_index], enc);
  EXPECT_DOUBLE_EQ(summary.rows[1].sums[summary.rank_index], head);
  EXPECT_DOUBLE_EQ(summary.rows[0].share, enc / (enc + head));
  EXPECT_DOUBLE_EQ(summary.rows[1].share, head / (enc + head));
}

}  // namespace
}  // namespace modelcost
