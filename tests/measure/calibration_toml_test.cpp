// `modelcost calibrate` writes a hwdb entry that the hardware database loads (--hwdb DIR).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "modelcost/errors.h"
#include "modelcost/hardware.h"
#include "modelcost/kernel_plan.h"
#include "modelcost/measure.h"

namespace modelcost {

TEST(MeasureCalibrationToml, RoundTripsThroughTheHardwareDatabaseSchema) {
  CalibrationResult r;
  r.device.is_gpu = true;
  r.device.name = "NVIDIA H100 80GB HBM3";
  r.device.driver = "CUDA 13.0";
  r.device.compute_capability_major = 9;
  r.device.multiprocessors = 132;
  r.device.sm_clock_mhz = 1980;
  r.device.memory_bytes = 85e9;
  r.device.l2_bytes = 52428800;
  r.dram_gbps = 2805.5;
  r.fp32_vector_tflops = 56.7;
  r.fp16_vector_tflops = 63.9;
  r.tensor_tflops = {{"fp32", 51.8}, {"tf32", 418}, {"fp16", 779}, {"bf16", 812}, {"fp8", 1542}};
  r.notes = {"copy of 1 GiB \"d2d\"", "8192^3 GEMMs"};
  const Device d = parse_device_toml(calibration_to_hwdb_toml(r, "h100-calibrated"), "calibrated.toml");
  EXPECT_EQ(d.id, "h100-calibrated");
  EXPECT_EQ(d.kind, "gpu");
  EXPECT_EQ(d.compute_units, 132);
  EXPECT_NEAR(d.memory_bandwidth_gbps, 2805.5, 0.05);
  EXPECT_NEAR(d.vector_tflops.at("fp32"), 56.7, 1e-9);
  EXPECT_NEAR(d.tensor_tflops.at("fp16"), 779, 1e-9);
  EXPECT_EQ(d.tensor_tflops.count("fp32"), 0u);
  EXPECT_NEAR(d.memory_gb, 85, 1e-9);
  EXPECT_EQ(d.sources.count("peak.tensor.fp8"), 1u);
  EXPECT_TRUE(d.interconnect.empty());  // one GPU: no all-reduce figures
}

TEST(MeasureCalibrationToml, WritesTheMeasuredAllReduceAsInterconnectFigures) {
  CalibrationResult r;
  r.device.is_gpu = true;
  r.device.name = "NVIDIA H200";
  r.dram_gbps = 4000;
  r.fp32_vector_tflops = 60;
  r.allreduce_ranks = 2;
  r.allreduce_bus_gbps = 361.5;
  r.allreduce_latency_us = 4.25;
  const Device d = parse_device_toml(calibration_to_hwdb_toml(r, "h200-calibrated"), "calibrated.toml");
  EXPECT_NEAR(d.interconnect.at("allreduce_bus_gbps"), 361.5, 1e-9);
  EXPECT_NEAR(d.interconnect.at("allreduce_latency_us"), 4.25, 1e-9);
  EXPECT_EQ(d.sources.count("interconnect.allreduce_bus_gbps"), 1u);
  EXPECT_EQ(d.sources.count("interconnect.allreduce_latency_us"), 1u);
  EXPECT_TRUE(d.allreduce_curves.empty());  // no sizes timed: no curve written
  // Every size timed is written as the entry's curve.
  r.allreduce_curve.ranks = 2;
  r.allreduce_curve.bytes_us = {{1024, 7.9}, {2097152, 31.4}, {268435456, 886.0}};
  const Device with_curve = parse_device_toml(calibration_to_hwdb_toml(r, "h200-calibrated"), "calibrated.toml");
  ASSERT_EQ(with_curve.allreduce_curves.by_ranks.size(), 1u);
  const AllReduceCurve& curve = with_curve.allreduce_curves.by_ranks[0];
  ASSERT_EQ(curve.bytes_us.size(), 3u);
  EXPECT_EQ(curve.ranks, 2);
  EXPECT_NEAR(curve.bytes_us[1].second, 31.4, 1e-9);
  EXPECT_EQ(with_curve.sources.count("interconnect.allreduce_curve"), 1u);
}

TEST(MeasureCalibrationToml, WritesTheFittedKernelCurves) {
  CalibrationResult r;
  r.device.is_gpu = true;
  r.device.name = "GPU";
  r.dram_gbps = 3000;
  r.fp32_vector_tflops = 60;
  // Two pointwise calls on a 2 us + bytes / 2000 GB/s line of fresh durations.
  for (double bytes : {1e6, 1e8}) {
    LibraryKernelSample s;
    s.kind = "pointwise";
    s.bytes = bytes;
    s.kernel_us = 1;
    s.graph_us = 2;  // 1 us of idle time after each call
    s.fresh_us = 2 + bytes / 2000e3;
    r.library_kernels.push_back(s);
  }
  EXPECT_DOUBLE_EQ(r.library_kernels[0].model_us(), 2 + 1e6 / 2000e3);  // the fresh duration alone
  r.library_curves = fit_library_curves(r.library_kernels);
  const Device d = parse_device_toml(calibration_to_hwdb_toml(r, "gpu-calibrated"), "calibrated.toml");
  const KernelCurve& c = d.achievable.kernel_curves.at("pointwise");
  EXPECT_NEAR(c.fixed_us, 2, 0.2);
  EXPECT_NEAR(c.gbps / 2000, 1, 0.06);
  EXPECT_EQ(d.sources.count("achievable.kernels.pointwise"), 1u);
  // The CSV reads back as written.
  const auto back = parse_library_kernels_csv(library_kernels_csv(r), "grid.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back[1].bytes, 1e8);
  EXPECT_NEAR(back[1].fresh_us, r.library_kernels[1].fresh_us, 1e-3);
  EXPECT_THROW(parse_library_kernels_csv("header\npointwise,x,y,1,2\n", "bad.csv"), Error);
  EXPECT_THROW(parse_library_kernels_csv("header\npointwise,x,y,a,2,0,1,1,2\n", "bad.csv"), Error);
}

// The measured curves of each GPU we calibrated (H100 SXM, H200) are the fit of its shipped grid
// (calibrate --from-grid), nothing else; a class its grid did not time is carried over from
// another calibrated GPU and sourced as derived.
class ShippedGrid : public ::testing::TestWithParam<const char*> {};

// The calls of an entry's shipped grid (docs/calibration/ENTRY-grid.csv); empty when absent.
std::vector<LibraryKernelSample> shipped_grid_calls(const std::string& entry) {
  std::ifstream in(std::string(MODELCOST_SOURCE_DIR) + "/docs/calibration/" + entry + "-grid.csv");
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return parse_library_kernels_csv(text.str(), entry + "-grid.csv");
}

TEST_P(ShippedGrid, EntryCurvesAreTheFitOfTheGrid) {
  const std::string entry = GetParam();
  const std::vector<LibraryKernelSample> calls = shipped_grid_calls(entry);
  ASSERT_FALSE(calls.empty()) << entry;
  const auto curves = fit_library_curves(calls);
  const HardwareDb db = load_hardware_db({}, false);  // kept: resolve() returns a reference into it
  const Device& device = db.resolve(entry);
  for (const auto& [name, curve] : device.achievable.kernel_curves) {
    const auto source = device.sources.find("achievable.kernels." + name);
    ASSERT_NE(source, device.sources.end()) << name;
    EXPECT_EQ(source->second.derived, curves.count(name) == 0) << name;
  }
  for (const auto& [name, fit] : curves) {
    const KernelCurve& shipped = device.achievable.kernel_curves.at(name);
    // The entry keeps 3-4 significant digits of each term.
    EXPECT_NEAR(shipped.fixed_us / fit.fixed_us, 1, 0.01) << name;
    EXPECT_NEAR(shipped.gbps / fit.gbps, 1, 0.01) << name;
    if (fit.tflops > 0) EXPECT_NEAR(shipped.tflops / fit.tflops, 1, 0.01) << name;
    if (fit.k_us_per_1000 > 0) EXPECT_NEAR(shipped.k_us_per_1000 / fit.k_us_per_1000, 1, 0.01) << name;
  }
}

// The kernel plan's shape of a grid call, read back from its shape text ("B=1 M=256 N=384 K=196",
// "N=32 C=408>408 14x14 k3 s1 g17", "N=1 C=256>256 28x28 k3 s1 g1 d4", "N=1 C=96>96 56x56 k3 s1 g96 silu"); nullopt for the byte
// classes' calls.
std::optional<KernelShape> grid_call_shape(const std::string& text) {
  long long b, m, n, k, batch, cin, cout, size, window, stride, groups;
  KernelShape s;
  if (std::sscanf(text.c_str(), "B=%lld M=%lld N=%lld K=%lld", &b, &m, &n, &k) == 4) {
    s.cls = KernelClass::kGemm;
    s.n = static_cast<double>(n);
    s.k = static_cast<double>(k);
    return s;
  }
  if (std::sscanf(text.c_str(), "N=%lld C=%lld>%lld %lldx%*lld k%lld s%lld g%lld", &batch, &cin, &cout, &size, &window, &stride,
                  &groups) != 7)
    return std::nullopt;
  s.taps = static_cast<double>(window * window);
  s.groups = static_cast<double>(groups);
  s.group_width = static_cast<double>(cout / groups);
  s.k = static_cast<double>(cin / groups) * s.taps;
  s.cls = groups == 1 ? (window == 1 ? KernelClass::kConv1x1 : KernelClass::kConv)
          : cin == groups ? KernelClass::kDepthwise : KernelClass::kGroupedConv;
  if (const size_t at = text.find(" d"); at != std::string::npos) s.dilation = std::stod(text.substr(at + 2));
  s.swish_epilogue = text.find(" silu") != std::string::npos;  // the conv with its SiLU in the kernel
  return s;
}

// Each matrix call of a shipped grid fits the curve its shape is priced by: the unaligned curve
// exactly where the kernel plan's tile_aligned rule says the shape is unaligned, the dilated one
// for a dense conv of a dilated window.
TEST_P(ShippedGrid, EveryCallFitsTheCurveItsShapeIsPricedBy) {
  const std::string entry = GetParam();
  int checked = 0;
  for (const LibraryKernelSample& call : shipped_grid_calls(entry)) {
    const std::optional<KernelShape> shape = grid_call_shape(call.shape);
    if (!shape || call.kind.rfind("decode", 0) == 0 || call.kind.rfind("expert", 0) == 0) continue;
    EXPECT_EQ(call.kind, kernel_curve_name(*shape, 2)) << call.shape;
    ++checked;
  }
  EXPECT_GT(checked, 100) << entry;
}

INSTANTIATE_TEST_SUITE_P(MeasureCalibrationToml, ShippedGrid, ::testing::Values("h100-sxm", "h200"));

}  // namespace modelcost
