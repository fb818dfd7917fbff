// The extension points later stages use: one column, one total, one section reach every format.
#include <gtest/gtest.h>

#include "report/aggregate.h"
#include "report/report_fixtures.h"
#include "report/table_printer.h"

namespace modelcost::testing {
namespace {

TEST(ReportColumns, DefaultColumnsPerSink) {
  auto run = hand_costed_run();
  const Report report = build_report(run->analysis, "test");
  std::vector<std::string> table;
  for (const auto& c : report.columns)
    if (c.sinks & kSinkTable) table.push_back(c.name);
  EXPECT_EQ(table, (std::vector<std::string>{"name", "op", "macs", "flops", "params", "bytes", "arithmetic_intensity",
                                             "output_shapes", "note"}));
  for (const auto& c : report.columns) EXPECT_FALSE(c.unit.empty()) << c.name;
}

TEST(ReportColumns, AColumnATotalAndASectionReachEveryFormat) {
  auto run = hand_costed_run();
  Report report = build_report(run->analysis, "test");
  const std::vector<double> predicted_us = {1.5, 0.25, 2.0};  // a later stage's per-node results
  ReportColumn column;
  column.name = "predicted_us";
  column.title = "pred us";
  column.unit = "microseconds";
  column.kind = ColumnKind::kTime;
  column.additive = true;
  column.value = [predicted_us](const NodeAnalysis&, size_t row) { return CellValue::of_number(predicted_us[row]); };
  report.add_column_after("arithmetic_intensity", column);
  ReportTotal total;
  total.name = "predicted_latency_ms";
  total.title = "predicted latency (ms)";
  total.unit = "milliseconds";
  total.kind = ColumnKind::kTime;
  total.value = [](const Analysis&) { return CellValue::of_number(0.00375); };
  report.totals.push_back(total);
  report.sections.push_back({"hardware", [] { return Json{{"id", "a100-sxm4-80gb"}}; },
                             [](std::ostream& out) { out << "\nHardware: A100 SXM4 80GB\n"; }});

  const auto rows = parse_csv(csv_text(report));
  EXPECT_EQ(rows[0][9], "predicted_us");
  EXPECT_EQ(rows[1][9], "1.5");
  const Json json = json_of(report);
  EXPECT_EQ(json["nodes"][1]["predicted_us"].get<double>(), 0.25);
  EXPECT_EQ(json["totals"]["predicted_latency_ms"].get<double>(), 0.00375);
  EXPECT_EQ(json["hardware"]["id"], "a100-sxm4-80gb");
  EXPECT_EQ(json["by_op_type"][0]["predicted_us"].get<double>(), 3.5);  // additive: summed per op type
  std::ostringstream table;
  print_table(report, {}, table);
  EXPECT_NE(table.str().find("pred us"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("Hardware: A100 SXM4 80GB"), std::string::npos);
  EXPECT_NE(table.str().find("predicted latency (ms)  0.00375"), std::string::npos) << table.str();
}

TEST(ReportColumns, RankByAnotherColumn) {
  auto run = hand_costed_run();
  Report report = build_report(run->analysis, "test");
  report.rank_by = "bytes_written";
  const auto top = heaviest_nodes(report, 3);
  // fc1 writes 64, act 64 (tie keeps topological order), fc2 16.
  EXPECT_EQ(top, (std::vector<size_t>{0, 1, 2}));
  report.rank_by = "macs";
  EXPECT_EQ(heaviest_nodes(report, 5), (std::vector<size_t>{0, 2}));  // act has no MACs
}

}  // namespace
}  // namespace modelcost::testing
