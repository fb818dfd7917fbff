// `modelcost calibrate` writes a hwdb entry that the hardware database loads (--hwdb DIR).
#include <gtest/gtest.h>

#include "modelcost/hardware.h"
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
}

}  // namespace modelcost
