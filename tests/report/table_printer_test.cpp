#include "report/table_printer.h"

#include <gtest/gtest.h>

#include "report/aggregate.h"
#include "report/report_fixtures.h"

namespace modelcost::testing {
namespace {

std::string table_text(const Report& report, TableOptions options = {}) {
  std::ostringstream out;
  print_table(report, options, out);
  return out.str();
}

size_t line_count(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(ReportTable, HeaderTotalsNodesOpTypesWarnings) {
  auto run = hand_costed_run();
  run->analysis.totals.macs = 4089184256;  // to see the human units
  run->analysis.totals.bytes_read = 97.5e6;
  const std::string text = table_text(build_report(run->analysis, "1.2.3"));
  EXPECT_NE(text.find("modelcost 1.2.3: test-model"), std::string::npos) << text;
  EXPECT_NE(text.find("modelcost-tests"), std::string::npos);
  EXPECT_NE(text.find("ai.onnx 17"), std::string::npos);
  EXPECT_NE(text.find("float32  [1,8]     1x8"), std::string::npos) << text;
  EXPECT_NE(text.find("MACs                4.09 G"), std::string::npos) << text;
  EXPECT_NE(text.find("bytes read          97.5 MB"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes               3\n"), std::string::npos) << text;
  // Heaviest first: fc1 (256 FLOPs) before fc2 (128) before act (16).
  const size_t fc1 = text.find("  fc1  "), fc2 = text.find(kLastNodeName), act = text.find("  act  ");
  ASSERT_NE(fc1, std::string::npos) << text;
  ASSERT_NE(fc2, std::string::npos);
  ASSERT_NE(act, std::string::npos);
  EXPECT_LT(fc1, fc2);
  EXPECT_LT(fc2, act);
  EXPECT_NE(text.find("Heaviest 3 of 3 nodes by FLOPs"), std::string::npos);
  EXPECT_NE(text.find("By op type (2 types)"), std::string::npos);
  EXPECT_NE(text.find("96.0%"), std::string::npos);  // MatMul: 384 of 400 FLOPs
  EXPECT_NE(text.find("Warnings (1)\n  - a test warning\n"), std::string::npos);
}

TEST(ReportTable, TopLimitsNodesAndOpTypesUnlessByOp) {
  auto run = hand_costed_run();
  const Report report = build_report(run->analysis, "test");
  TableOptions options;
  options.top = 1;
  const std::string text = table_text(report, options);
  EXPECT_NE(text.find("Heaviest 1 of 3 nodes"), std::string::npos) << text;
  EXPECT_EQ(text.find("  act  "), std::string::npos) << text;
  EXPECT_NE(text.find("... 1 more op types (--by-op lists them all)"), std::string::npos) << text;
  options.all_op_types = true;
  const std::string all = table_text(report, options);
  EXPECT_EQ(all.find("more op types"), std::string::npos);
  EXPECT_NE(all.find("\n  Relu  "), std::string::npos) << all;
}

TEST(ReportTable, SaysWhenNothingIsCosted) {
  auto run = hand_costed_run();
  for (auto& n : run->analysis.nodes) n.cost = NodeCost{};
  const std::string text = table_text(build_report(run->analysis, "test"));
  EXPECT_NE(text.find("Heaviest nodes: no node has FLOPs > 0"), std::string::npos) << text;
}

TEST(ReportTable, LongNamesKeepTheirEnd) {
  auto run = hand_costed_run();
  const std::string long_name = "/encoder/layer.11/attention/self/query/MatMul_with_a_very_long_suffix";
  const_cast<Node*>(run->analysis.nodes[0].node)->name = long_name;
  const std::string text = table_text(build_report(run->analysis, "test"));
  EXPECT_NE(text.find("  ..." + long_name.substr(long_name.size() - 41) + "  MatMul"), std::string::npos) << text;
}

TEST(ReportTable, ControlCharactersInNamesStayOnOneLine) {
  auto run = hand_costed_run();
  const_cast<Node*>(run->analysis.nodes[0].node)->name = "two\nlines\tand a tab";
  const std::string text = table_text(build_report(run->analysis, "test"));
  EXPECT_NE(text.find("\n  two lines and a tab  MatMul"), std::string::npos) << text;
}

TEST(ReportTable, ContainsTheTopNodeOfResnet50) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  auto run = analyse_file(shared_model("resnet50_op13.onnx"));
  const Report report = build_report(run->analysis, "test");
  const std::string text = table_text(report);
  EXPECT_NE(text.find("input  float32  [batch,3,224,224]  1x3x224x224"), std::string::npos) << text;
  EXPECT_NE(text.find("params              25.5 M"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes               169\n"), std::string::npos) << text;
  EXPECT_NE(text.find("symbolic dims not set, using 1: batch"), std::string::npos) << text;
  const auto top = heaviest_nodes(report, 1);
  if (top.empty()) {
    EXPECT_NE(text.find("no node has FLOPs > 0"), std::string::npos) << text;  // before the Conv rule lands
  } else {
    const std::string name = run->analysis.nodes[top[0]].node->name;
    EXPECT_NE(text.find("\n  " + name.substr(name.size() > 40 ? name.size() - 40 : 0)), std::string::npos) << text;
    EXPECT_EQ(run->analysis.nodes[top[0]].node->op_type, "Conv");
  }
  EXPECT_LE(line_count(text), 80u);  // a summary, not a dump
}

}  // namespace
}  // namespace modelcost::testing
