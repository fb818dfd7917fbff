#include <gtest/gtest.h>

#include "measure/cpu_backend.h"
#include "modelcost/errors.h"
#include "modelcost/measure.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

ModelBuilder small_cnn() {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 3, 16, 16}).weight("w", kFloat, Shape{8, 3, 3, 3}).weight("cb", kFloat, Shape{8});
  set_attr(b.node("Conv", {"x", "w", "cb"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  b.node("GlobalAveragePool", {"r"}, {"p"});
  b.node("Flatten", {"p"}, {"f"});
  b.weight("fw", kFloat, Shape{10, 8}).weight("fb", kFloat, Shape{10});
  set_attr(b.node("Gemm", {"f", "fw", "fb"}, {"y"}), "transB", int64_t{1});
  b.output("y");
  return b;
}

MeasureOptions quick() {
  MeasureOptions o;
  o.cpu = true;
  o.max_seconds_per_node = 0.01;
  return o;
}

}  // namespace

TEST(MeasureCpuBackend, MeasuresEveryNodeAndZeroCostsFlatten) {
  auto run = analyse(small_cnn());
  auto backend = make_backend(true);
  EXPECT_FALSE(backend->device().is_gpu);
  size_t progress_calls = 0;
  MeasureOptions o = quick();
  o.progress = [&](size_t done, size_t total, const std::string&) {
    ++progress_calls;
    EXPECT_EQ(total, 5u);
    EXPECT_EQ(done, progress_calls);
  };
  auto results = measure_nodes(run->analysis, *backend, o);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(progress_calls, 5u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].measured) << run->analysis.nodes[i].node->name << ": " << results[i].reason;
    EXPECT_GE(results[i].samples, results[i].zero_cost ? 0 : 10);
  }
  EXPECT_TRUE(results[3].zero_cost);  // Flatten
  EXPECT_DOUBLE_EQ(results[3].median_us, 0);
  EXPECT_GT(results[0].median_us, 0);  // Conv
  EXPECT_LE(results[0].min_us, results[0].median_us);
  EXPECT_LE(results[0].median_us, results[0].max_us);
  ModelMeasurement whole = measure_model(run->analysis, *backend, o, results);
  EXPECT_TRUE(whole.measured) << whole.reason;
  EXPECT_GT(whole.median_us, 0);
  EXPECT_GT(whole.sum_of_node_medians_us, 0);
}

TEST(MeasureCpuBackend, UnsupportedNodeGetsReasonAndRunGoesOn) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{3, 3});
  b.node("Det", {"x"}, {"d"});
  b.node("Relu", {"x"}, {"r"});
  b.output("d").output("r");
  auto run = analyse(b);
  auto backend = make_backend(true);
  auto results = measure_nodes(run->analysis, *backend, quick());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].measured);
  EXPECT_NE(results[0].reason.find("Det"), std::string::npos) << results[0].reason;
  EXPECT_TRUE(results[1].measured);
}

TEST(MeasureBackend, GpuRequestWithoutGpuFailsInOneLine) {
  if (cuda_support_compiled()) {
    try {
      make_backend(false);
      GTEST_SKIP() << "an NVIDIA GPU is present";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kExitRuntime);
      EXPECT_NE(std::string(e.what()).find("no NVIDIA GPU"), std::string::npos) << e.what();
    }
    return;
  }
  try {
    make_backend(false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitRuntime);
    EXPECT_NE(std::string(e.what()).find("no NVIDIA GPU"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(MeasureBackend, CalibrationTomlCarriesFigures) {
  CalibrationResult r;
  r.device.is_gpu = true;
  r.device.name = "NVIDIA H100 80GB HBM3";
  r.device.multiprocessors = 132;
  r.dram_gbps = 2950.4;
  r.fp32_vector_tflops = 51.2;
  r.tensor_tflops["fp16"] = 750.0;
  r.notes.push_back("test");
  const std::string toml = calibration_to_hwdb_toml(r, "h100-local");
  EXPECT_NE(toml.find("id = \"h100-local\""), std::string::npos) << toml;
  EXPECT_NE(toml.find("memory_bandwidth_gbps = 2950.4"), std::string::npos) << toml;
  EXPECT_NE(toml.find("[peak.tensor]"), std::string::npos) << toml;
  EXPECT_NE(toml.find("fp16 = 750.0"), std::string::npos) << toml;
  EXPECT_NE(toml.find("sm_count = 132"), std::string::npos) << toml;
  const std::string table = format_calibration(r, {{"dram_gbps", 3352}, {"fp16", 989.4}});
  EXPECT_NE(table.find("88%"), std::string::npos) << table;  // 2950.4 / 3352
  EXPECT_NE(table.find("76%"), std::string::npos) << table;  // 750 / 989.4
}

TEST(MeasureCpuBackend, CalibrateGivesPositiveFigures) {
  auto backend = make_backend(true);
  MeasureOptions o = quick();
  CalibrationResult r = backend->calibrate(o);
  EXPECT_GT(r.dram_gbps, 0);
  EXPECT_GT(r.fp32_vector_tflops, 0);
}

}  // namespace modelcost::testing
