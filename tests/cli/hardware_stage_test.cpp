// The CLI's hardware, plan and measurement options end to end.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"
#include "modelcost/measure.h"

namespace modelcost::testing {
namespace {

const std::string kSample = std::string(MODELCOST_SOURCE_DIR) + "/samples/resnet50.onnx";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool cuda_gpu_present() {
  try {
    make_backend(false);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

TEST(CliHardware, Resnet50OnA100PrintsBoundPredictedTimeAndVerdict) {
  const CliResult r = run_modelcost(kSample + " --gpu a100 --dim batch=1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("'a100' is an alias of a100-sxm4-80gb"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("on A100 SXM4 80GB, fp32, batch 1: [0-9]+ of 53 Conv kernels memory-bound(, [0-9]+ overhead-bound)?; "
                                                       "predicted [0-9.]+ ms deployed \\([0-9.]+ ms as written\\)")))
      << r.out;
  EXPECT_NE(r.out.find("pred us"), std::string::npos);
  EXPECT_NE(r.out.find("compute"), std::string::npos);
}

TEST(CliHardware, JsonAndCsvCarryTheSameRooflineFigures) {
  TempDir dir;
  const CliResult r = run_modelcost(kSample + " --gpu h100 --dtype fp16 -q --json " + dir.file("r.json") + " --csv " + dir.file("r.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_text(dir.file("r.json")));
  EXPECT_EQ(j["hardware"]["id"], "h100-sxm");
  EXPECT_EQ(j["hardware"]["dtype"], "fp16");
  double sum = 0;
  size_t compute = 0, memory = 0;
  for (const auto& n : j["nodes"]) {
    sum += n["predicted_us"].get<double>();
    compute += n["bound"] == "compute";
    memory += n["bound"] == "memory";
  }
  EXPECT_NEAR(sum / 1e3, j["totals"]["predicted_latency_ms"].get<double>(), 1e-9);
  EXPECT_EQ(compute, j["totals"]["compute_bound_nodes"].get<size_t>());
  EXPECT_EQ(memory, j["totals"]["memory_bound_nodes"].get<size_t>());
  const std::string csv = read_text(dir.file("r.csv"));
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find("bound,predicted_us,share"), std::string::npos) << header;
  EXPECT_EQ(count(csv, ",compute,"), compute);
  EXPECT_EQ(count(csv, ",memory,"), memory);
}

TEST(CliHardware, DeployedViewGroupsInJsonCsvAndGroupsCsv) {
  TempDir dir;
  const CliResult r = run_modelcost(kSample + " --gpu h100 --dtype fp16 --json " + dir.file("r.json") + " --csv " +
                                    dir.file("r.csv") + " --groups-csv " + dir.file("g.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Deployed: 56 kernels from 169 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernels memory-bound"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_text(dir.file("r.json")));
  const auto& groups = j["groups"];
  ASSERT_EQ(groups.size(), 56u);
  double deployed_us = 0;
  size_t members = 0;
  for (const auto& g : groups) {
    deployed_us += g["predicted_us"].get<double>();
    members += g["members"].size();
  }
  EXPECT_NEAR(deployed_us / 1e3, j["totals"]["predicted_latency_deployed_ms"].get<double>(), 1e-9);
  EXPECT_LT(j["totals"]["predicted_latency_deployed_ms"].get<double>(), j["totals"]["predicted_latency_ms"].get<double>());
  // One row per ONNX node still; every node that runs is in exactly one group.
  size_t grouped = 0;
  for (const auto& n : j["nodes"]) grouped += n["group"].is_number();
  EXPECT_EQ(j["nodes"].size(), 169u);
  EXPECT_EQ(grouped, members);
  const std::string groups_csv = read_text(dir.file("g.csv"));
  EXPECT_EQ(groups_csv.rfind("group,pattern,label,anchor,members,nodes,", 0), 0u);
  EXPECT_EQ(count(groups_csv, "\r\n"), 57u);  // header + one row per group
  EXPECT_NE(read_text(dir.file("r.csv")).find(",group,"), std::string::npos);
  // --view as-written: the verdict counts layers and gives the as-written latency first.
  const CliResult w = run_modelcost(kSample + " --gpu h100 --dtype fp16 --view as-written");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("Conv layers"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("ms as written ("), std::string::npos) << w.out;
  EXPECT_EQ(run_modelcost(kSample + " --gpu h100 --view fused").code, kExitUsage);
  EXPECT_EQ(run_modelcost(kSample + " --groups-csv " + dir.file("x.csv")).code, kExitUsage);  // needs a device
}

TEST(CliHardware, BatchSweepWritesAPlanWithTheLargestFittingBatch) {
  TempDir dir;
  const CliResult r = run_modelcost(kSample + " --gpu a100 --batch 1,8,32 --target-qps 3000 -q --json " + dir.file("p.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plan = nlohmann::json::parse(read_text(dir.file("p.json")))["plan"];
  ASSERT_EQ(plan["rows"].size(), 3u);
  double last = 0;
  for (const auto& row : plan["rows"]) {
    EXPECT_GT(row["throughput_per_s"].get<double>(), last);  // grows with batch on ResNet-50
    last = row["throughput_per_s"].get<double>();
    EXPECT_TRUE(row["fits"].get<bool>());
  }
  EXPECT_GT(plan["max_batch_fits"].get<int64_t>(), 32);
  EXPECT_GE(plan["devices_needed"].get<int64_t>(), 1);
}

TEST(CliHardware, ComparesSeveralDevicesSideBySide) {
  const CliResult r = run_modelcost(kSample + " --gpu a100,h100,l4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Devices side by side"), std::string::npos);
  EXPECT_NE(r.out.find("L4"), std::string::npos);
}

TEST(CliHardware, CustomDeviceFromInlineFigures) {
  TempDir dir;
  const CliResult r = run_modelcost(kSample + " --peak-tflops 100 --bandwidth-gbps 1000 -q --json " + dir.file("c.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_text(dir.file("c.json")));
  EXPECT_GT(j["totals"]["predicted_latency_ms"].get<double>(), 0);
}

TEST(CliHardware, RooflineSvgHasAMarkPerCostedNode) {
  TempDir dir;
  const CliResult r = run_modelcost(kSample + " --gpu a100 -q --roofline-svg " + dir.file("r.svg"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read_text(dir.file("r.svg"));
  EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.rfind("<?xml", 0) == 0, true);
  EXPECT_NE(svg.find("/conv1/Conv"), std::string::npos);
}

TEST(CliHardware, ListGpusPrintsOneDevicePerLineAfterAHeader) {
  const CliResult r = run_modelcost("--list-gpus");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GE(count(r.out, "\n"), 17u);
  EXPECT_NE(r.out.find("h100-sxm"), std::string::npos);
}

TEST(CliHardware, OptionsThatNeedADeviceSaySo) {
  // --dtype alone re-sizes bytes and needs none (new_user_commands_test.cpp).
  for (const char* args : {" --batch 1,8", " --roofline-svg x.svg", " --peak-tflops 10"}) {
    const CliResult r = run_modelcost(kSample + args);
    EXPECT_EQ(r.code, kExitUsage) << args;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("modelcost: error:", 0), 0u) << r.err;
  }
}

TEST(CliHardware, UnknownDeviceListsCloseMatches) {
  const CliResult r = run_modelcost(kSample + " --gpu h101");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find("h100"), std::string::npos) << r.err;
}

TEST(CliHardware, FixedBatchModelRefusesAnotherBatchInOneLine) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  const CliResult r = run_modelcost(shared_model("resnet50_op18.onnx") + " --gpu h100 --batch 1,64");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find("fixed batch"), std::string::npos) << r.err;
}

TEST(CliMeasure, WithoutAGpuSaysSoInOneLine) {
  if (cuda_gpu_present()) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  const CliResult r = run_modelcost(kSample + " --measure");
  EXPECT_NE(r.code, 0);
  EXPECT_LT(r.code, 126);
  EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find("GPU"), std::string::npos) << r.err;
}

TEST(CliMeasure, CpuBackendMeasuresEveryNodeOfASmallModel) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 64});
  b.weight("w", kFloat, {64, 32});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string model = write_model(dir, "m.onnx", b);
  const CliResult r = run_modelcost(model + " --measure --cpu -q --json " + dir.file("m.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_text(dir.file("m.json")));
  for (const auto& n : j["nodes"]) EXPECT_GT(n["measured_us"].get<double>(), 0) << n["name"];
  EXPECT_EQ(j["measurement"]["nodes_measured"], 2);
}

}  // namespace modelcost::testing

namespace modelcost::testing {

TEST(CliHardware, DtypeRecastsReportedBytesConsistently) {
  TempDir dir;
  const std::string base = kSample + " --gpu h100 -q --json ";
  ASSERT_EQ(run_modelcost(base + dir.file("fp32.json")).code, 0);
  ASSERT_EQ(run_modelcost(base + dir.file("fp16.json") + " --dtype fp16 --csv " + dir.file("fp16.csv")).code, 0);
  const auto fp32 = nlohmann::json::parse(read_text(dir.file("fp32.json")))["totals"];
  const auto fp16 = nlohmann::json::parse(read_text(dir.file("fp16.json")))["totals"];
  // Every tensor of ResNet-50 is float32 except none that move bytes: fp16 halves them exactly.
  EXPECT_DOUBLE_EQ(fp16["bytes_read"].get<double>(), fp32["bytes_read"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(fp16["bytes_written"].get<double>(), fp32["bytes_written"].get<double>() / 2);
  EXPECT_DOUBLE_EQ(fp16["flops"].get<double>(), fp32["flops"].get<double>());
  std::istringstream csv(read_text(dir.file("fp16.csv")));
  std::string line;
  std::getline(csv, line);
  size_t column = 0, at = 0;
  for (size_t i = 0; i < line.find("bytes_read"); ++i) column += line[i] == ',';
  double sum = 0;
  while (std::getline(csv, line)) {
    at = 0;
    for (size_t c = 0; c < column; ++c) at = line.find(',', at) + 1;
    sum += std::stod(line.substr(at, line.find(',', at) - at));
  }
  EXPECT_DOUBLE_EQ(sum, fp16["bytes_read"].get<double>());
}

}  // namespace modelcost::testing

namespace modelcost::testing {

TEST(CliHardware, RooflineSvgShowsMeasuredPlacesBesideThePredictedOnes) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{64, 128});
  b.weight("w", kFloat, {128, 64});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string model = write_model(dir, "m.onnx", b);
  const CliResult r = run_modelcost(model + " --peak-tflops 1 --bandwidth-gbps 100 --measure --cpu -q --roofline-svg " + dir.file("m.svg"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read_text(dir.file("m.svg"));
  EXPECT_EQ(count(svg, "class=\"measured\""), 2u) << svg;  // MatMul and Relu both do FLOPs
  EXPECT_NE(svg.find("measured (2 nodes)"), std::string::npos);
  const CliResult plain = run_modelcost(model + " --peak-tflops 1 --bandwidth-gbps 100 -q --roofline-svg " + dir.file("p.svg"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(count(read_text(dir.file("p.svg")), "class=\"measured\""), 0u);
}

}  // namespace modelcost::testing
