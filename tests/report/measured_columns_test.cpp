// The measured columns and the "measurement" section: per-node times, achieved rates, and the
// whole-model run with the kernels inside its replay, in the table and in JSON.
#include <gtest/gtest.h>

#include <algorithm>

#include "report/measured_columns.h"
#include "report/report_fixtures.h"
#include "report/table_printer.h"

namespace modelcost::testing {
namespace {

std::vector<NodeMeasurement> three_measured_nodes() {
  std::vector<NodeMeasurement> nodes(3);
  const double medians[] = {2.0, 0.5, 1.5};
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].measured = true;
    nodes[i].median_us = nodes[i].min_us = medians[i];
    nodes[i].samples = 10;
    nodes[i].kernels = {"k" + std::to_string(i)};
    nodes[i].implementation = "impl " + std::to_string(i);
  }
  return nodes;
}

TEST(MeasuredColumns, PerNodeTimesAndAchievedRates) {
  auto run = hand_costed_run();
  Report report = build_report(run->analysis, "test");
  const auto nodes = three_measured_nodes();
  ModelMeasurement whole;
  DeviceInfo device;
  device.name = "Test GPU";
  add_measurements(report, nodes, whole, device, nullptr);
  const Json json = json_of(report);
  EXPECT_EQ(json["nodes"][0]["measured_us"].get<double>(), 2.0);
  // fc1: 256 FLOPs and 608 bytes in 2 us.
  EXPECT_DOUBLE_EQ(json["nodes"][0]["achieved_tflops"].get<double>(), 256 / 2e6);
  EXPECT_DOUBLE_EQ(json["nodes"][0]["achieved_gbps"].get<double>(), 608 / 2e3);
  EXPECT_EQ(json["nodes"][2]["kernels"], "k2");
  EXPECT_EQ(json["nodes"][1]["implementation"], "impl 1");
  EXPECT_DOUBLE_EQ(json["measurement"]["sum_of_node_medians_ms"].get<double>(), 0.004);
  EXPECT_FALSE(json["measurement"]["model_measured"].get<bool>());
  EXPECT_TRUE(json["measurement"]["model_kernels"].is_null());
}

TEST(MeasuredColumns, WholeModelShowsTheKernelsInsideItsReplay) {
  auto run = hand_costed_run();
  Report report = build_report(run->analysis, "test");
  const auto nodes = three_measured_nodes();
  ModelMeasurement whole;
  whole.measured = true;
  whole.median_us = 8.0;
  whole.method = "graph replay";
  whole.has_kernel_breakdown = true;
  whole.kernels_per_run = 3;
  whole.kernel_busy_us = 3.2;
  whole.kernel_span_us = 6.0;
  DeviceInfo device;
  device.name = "Test GPU";
  add_measurements(report, nodes, whole, device, nullptr);
  const Json json = json_of(report);
  EXPECT_EQ(json["measurement"]["model_kernels"].get<int>(), 3);
  EXPECT_DOUBLE_EQ(json["measurement"]["model_kernel_busy_ms"].get<double>(), 0.0032);
  EXPECT_DOUBLE_EQ(json["measurement"]["model_idle_ms"].get<double>(), 0.0048);
  std::ostringstream table;
  print_table(report, {}, table);
  const std::string text = table.str();
  EXPECT_NE(text.find("whole model (graph replay)  0.008 ms (spread 0.0%); sum / whole = 0.50"), std::string::npos) << text;
  EXPECT_NE(text.find("in it: 3 kernels busy 0.0032 ms (sum / busy = 1.25), GPU idle between and before them 0.0048 ms"),
            std::string::npos)
      << text;
}

TEST(MeasuredColumns, CounterColumnsFollowTheImplementation) {
  auto run = hand_costed_run();
  Report report = build_report(run->analysis, "test");
  auto nodes = three_measured_nodes();
  nodes[0].has_counters = true;
  nodes[0].dram_bytes_read = 600;
  nodes[0].dram_bytes_written = 8;
  nodes[0].has_executed_flops = true;
  nodes[0].executed_flops = 256;
  nodes[0].measured_intensity = 256.0 / 608;
  ModelMeasurement whole;
  add_measurements(report, nodes, whole, DeviceInfo{}, nullptr);
  add_counter_columns(report, nodes);
  const auto rows = parse_csv(csv_text(report));
  const auto& header = rows[0];
  const auto at = [&](const std::string& name) { return std::find(header.begin(), header.end(), name) - header.begin(); };
  EXPECT_EQ(at("implementation"), at("kernels") + 1);
  EXPECT_EQ(at("dram_bytes"), at("implementation") + 1);
  EXPECT_EQ(rows[1][at("dram_bytes")], "608");
  EXPECT_EQ(rows[1][at("executed_flops")], "256");
  EXPECT_EQ(rows[2][at("executed_flops")], "");  // no counters: empty, not 0
}

}  // namespace
}  // namespace modelcost::testing
