// --counters: how raw CUPTI metrics become DRAM bytes and executed FLOPs (host only), and on a
// GPU the counters of a large fp16 Add and a Conv against their analytic bytes and 2*MACs.
#include <gtest/gtest.h>

#include "measure/cuda_entry.h"
#include "modelcost/measure.h"
#include "test_support.h"

#ifdef MODELCOST_HAVE_CUDA
#include "measure/cuda/range_profiler.h"

namespace modelcost::testing {
namespace {

TEST(MeasureCounters, CombinesMetricsIntoBytesAndFlops) {
  const std::vector<std::string> names = {"dram__bytes_read.sum",
                                          "dram__bytes_write.sum",
                                          "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
                                          "sm__ops_path_tensor_src_fp16.sum",
                                          "sm__ops_path_tensor_src_tf32_dst_fp32.sum"};
  const std::vector<double> values = {1000, 600, 10, 3, 4, 20, 5, 6, 700, 50};
  const cuda::CounterValues c = cuda::counters_from_metrics(names, values);
  EXPECT_EQ(c.dram_bytes_read, 1000);
  EXPECT_EQ(c.dram_bytes_written, 600);
  EXPECT_EQ(c.fp32_flops, 2 * 10 + 3 + 4);  // 27
  EXPECT_EQ(c.fp16_flops, 2 * 20 + 5 + 6);  // 51
  EXPECT_EQ(c.tensor_ops, 750);
  EXPECT_EQ(c.executed_flops(), 828);
  EXPECT_DOUBLE_EQ(c.intensity(), 828.0 / 1600.0);
}

TEST(MeasureCounters, MissingMetricsCountZeroAndNoTrafficHasNoIntensity) {
  const cuda::CounterValues c =
      cuda::counters_from_metrics({"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "unknown.metric"}, {8, 99});
  EXPECT_EQ(c.executed_flops(), 16);
  EXPECT_EQ(c.dram_bytes(), 0);
  EXPECT_EQ(c.intensity(), 0);  // all from L2: no DRAM intensity rather than a division by zero
}

TEST(MeasureCounters, AsksForDramFp32Fp16AndTensorMetrics) {
  const auto& names = cuda::counter_metric_names();
  ASSERT_EQ(names.size(), 12u);
  EXPECT_EQ(names[0], "dram__bytes_read.sum");
  EXPECT_EQ(names[1], "dram__bytes_write.sum");
  EXPECT_EQ(names[8], "sm__ops_path_tensor_src_fp16.sum");
}

// The counters of the first node of a model, measured in fp16 on the GPU.
NodeMeasurement measure_with_counters(const ModelBuilder& builder) {
  auto run = analyse(builder);
  auto backend = make_backend(false);
  MeasureOptions o;
  o.dtype = "fp16";
  o.counters = true;
  o.max_seconds_per_node = 0.02;
  return backend->measure_node(run->analysis.nodes.at(0), o);
}

bool profiler_refused(const NodeMeasurement& m) {
  return m.counters_reason.find("PRIVILEGES") != std::string::npos || m.counters_reason.find("unsupported") != std::string::npos ||
         m.counters_reason.find("disabled") != std::string::npos;
}

TEST(MeasureCountersGpu, LargeFp16AddReadsItsInputsFromDram) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  ModelBuilder b;
  b.input("a", kFloat, Shape{32, 256, 56, 56}).input("b", kFloat, Shape{32, 256, 56, 56});
  b.node("Add", {"a", "b"}, {"y"});
  b.output("y");
  const NodeMeasurement m = measure_with_counters(b);
  ASSERT_TRUE(m.measured) << m.reason;
  if (!m.has_counters && profiler_refused(m)) GTEST_SKIP() << "profiler refused: " << m.counters_reason;
  ASSERT_TRUE(m.has_counters) << m.counters_reason;
  // 25,690,112 elements; fp16: inputs 2 x 51,380,224 bytes, output 51,380,224 bytes.
  const double input_bytes = 102760448, output_bytes = 51380224;
  std::printf("[counters] Add: DRAM read %.0f (analytic %.0f), written %.0f (analytic %.0f), flops %.0f\n", m.dram_bytes_read,
              input_bytes, m.dram_bytes_written, output_bytes, m.executed_flops);
  EXPECT_NEAR(m.dram_bytes_read / input_bytes, 1.0, 0.05);
  // Writes still in L2 (up to its 50 MB) when the kernel ends are not counted.
  EXPECT_GT(m.dram_bytes_written, 0.2 * output_bytes);
  EXPECT_LT(m.dram_bytes_written, 1.05 * output_bytes);
}

TEST(MeasureCountersGpu, ConvExecutesAboutTwiceItsMacs) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  ModelBuilder b;
  b.input("x", kFloat, Shape{32, 64, 56, 56}).weight("w", kFloat, Shape{64, 64, 3, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y");
  const NodeMeasurement m = measure_with_counters(b);
  ASSERT_TRUE(m.measured) << m.reason;
  if (!m.has_counters && profiler_refused(m)) GTEST_SKIP() << "profiler refused: " << m.counters_reason;
  ASSERT_TRUE(m.has_counters) << m.counters_reason;
  const double macs = 32.0 * 64 * 56 * 56 * 64 * 9;  // 3,699,376,128
  std::printf("[counters] Conv: executed %.0f flops = %.3f x 2*MACs; DRAM %.0f bytes; intensity %.1f\n", m.executed_flops,
              m.executed_flops / (2 * macs), m.dram_bytes_read + m.dram_bytes_written, m.measured_intensity);
  EXPECT_NEAR(m.executed_flops / (2 * macs), 1.0, 0.15);
  EXPECT_GT(m.measured_intensity, 0);
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
