// --counters: goes with --measure on the GPU; the report's counter columns and warning line.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "modelcost/errors.h"
#include "report/measured_columns.h"

namespace modelcost::testing {
namespace {

TEST(CliCounters, NeedsMeasure) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3}).node("Relu", {"x"}, {"y"});
  b.output("y");
  const CliResult r = run_modelcost(write_model(dir, "m.onnx", b) + " --counters");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--counters goes with --measure on the GPU"), std::string::npos) << r.err;
}

TEST(CliCounters, NotWithCpu) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3}).node("Relu", {"x"}, {"y"});
  b.output("y");
  const CliResult r = run_modelcost(write_model(dir, "m.onnx", b) + " --measure --cpu --counters");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("(not --cpu)"), std::string::npos) << r.err;
}

NodeMeasurement timed() {
  NodeMeasurement n;
  n.measured = true;
  n.median_us = 10;
  return n;
}

TEST(CliCounters, WarningSaysWhyCountersAreMissing) {
  NodeMeasurement refused = timed();
  refused.counters_reason = "cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  NodeMeasurement zero;
  zero.measured = true;
  zero.zero_cost = true;
  EXPECT_EQ(counters_warning({refused, zero, refused}),
            "counters unavailable: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  NodeMeasurement counted = timed();
  counted.has_counters = true;
  EXPECT_EQ(counters_warning({counted, refused}), "counters missing for 1 of 2 measured nodes: "
                                                  "cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(counters_warning({counted, zero}), "");
  EXPECT_EQ(counters_warning({timed()}), "counters unavailable: not collected by this backend");
}

TEST(CliCounters, ColumnsCarryBytesFlopsAndIntensity) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3}).node("Relu", {"x"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto run = analyse(b);
  Report report = build_report(run->analysis, "test");
  NodeMeasurement counted = timed();
  counted.has_counters = true;
  counted.dram_bytes_read = 300;
  counted.dram_bytes_written = 100;
  counted.executed_flops = 1000;
  counted.has_executed_flops = true;
  counted.measured_intensity = 2.5;
  NodeMeasurement bytes_only = counted;  // counters ran, but no FLOP counter saw this node's work
  bytes_only.has_executed_flops = false;
  NodeMeasurement refused = timed();
  refused.counters_reason = "unsupported";
  const std::vector<NodeMeasurement> nodes = {counted, refused};
  add_counter_columns(report, nodes);
  const ReportColumn* bytes = report.find_column("dram_bytes");
  const ReportColumn* flops = report.find_column("executed_flops");
  const ReportColumn* intensity = report.find_column("measured_intensity");
  ASSERT_TRUE(bytes && flops && intensity);
  EXPECT_EQ(bytes->value(run->analysis.nodes[0], 0).number, 400);
  EXPECT_EQ(flops->value(run->analysis.nodes[0], 0).number, 1000);
  EXPECT_EQ(intensity->value(run->analysis.nodes[0], 0).number, 2.5);
  EXPECT_EQ(bytes->value(run->analysis.nodes[1], 1).type, CellValue::Type::kEmpty);
  const std::vector<NodeMeasurement> partial = {bytes_only, refused};
  Report second = build_report(run->analysis, "test");
  add_counter_columns(second, partial);
  EXPECT_EQ(second.find_column("dram_bytes")->value(run->analysis.nodes[0], 0).number, 400);
  EXPECT_EQ(second.find_column("executed_flops")->value(run->analysis.nodes[0], 0).type, CellValue::Type::kEmpty);
  EXPECT_EQ(second.find_column("measured_intensity")->value(run->analysis.nodes[0], 0).type, CellValue::Type::kEmpty);
  ASSERT_FALSE(report.sections.empty());
  EXPECT_EQ(report.sections.back().name, "counters");
  const Json j = report.sections.back().json();
  EXPECT_EQ(j["nodes_with_counters"], 1);
  EXPECT_EQ(j["warning"], "counters missing for 1 of 2 measured nodes: unsupported");
}

}  // namespace
}  // namespace modelcost::testing
