// --counters: how raw CUPTI metrics become DRAM bytes and executed FLOPs (host only), and on a
// GPU the counters of a large fp16 Add and a Conv against their analytic bytes and 2*MACs.
#include <gtest/gtest.h>

#include "measure/cuda_entry.h"
#include "modelcost/measure.h"
#include "test_support.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/kernels.h"
#include "timing/timing.h"

namespace modelcost::testing {
namespace {

TEST(MeasureCounters, CombinesMetricsIntoBytesAndFlops) {
  const std::vector<std::string> names = {"dram__bytes_read.sum",
                                          "dram__bytes_write.sum",
                                          "smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_ops_hadd_hmul_hfma_pred_on.sum",
                                          "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
                                          "sm__ops_path_tensor_src_fp16.sum",
                                          "sm__ops_path_tensor_src_tf32_dst_fp32.sum"};
  // 17 FP32 instructions of which 10 FMAs; 31 FP16 instructions of which 20 FMAs.
  const std::vector<double> values = {1000, 600, 17, 10, 31, 20, 700, 50};
  const cuda::CounterValues c = cuda::counters_from_metrics(names, values);
  EXPECT_EQ(c.dram_bytes_read, 1000);
  EXPECT_EQ(c.dram_bytes_written, 600);
  EXPECT_EQ(c.fp32_flops, 27);  // 7 adds/muls + 2 x 10 FMAs
  EXPECT_EQ(c.fp16_flops, 51);  // 11 + 2 x 20
  EXPECT_EQ(c.tensor_ops, 750);
  EXPECT_EQ(c.executed_flops(), 828);
  EXPECT_DOUBLE_EQ(c.intensity(), 828.0 / 1600.0);
}

TEST(MeasureCounters, MissingMetricsCountZeroAndNoTrafficHasNoIntensity) {
  const cuda::CounterValues c =
      cuda::counters_from_metrics({"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "unknown.metric"}, {8, 99});
  EXPECT_EQ(c.executed_flops(), 8);
  EXPECT_EQ(c.dram_bytes(), 0);
  EXPECT_EQ(c.intensity(), 0);  // all from L2: no DRAM intensity rather than a division by zero
}

TEST(MeasureCounters, EachSassInstructionMetricHasAConfigurationOfItsOwn) {
  const auto& groups = cuda::counter_metric_groups();
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0][0], "dram__bytes_read.sum");
  EXPECT_EQ(groups[0][1], "dram__bytes_write.sum");
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t sass = 0;
    for (const auto& name : groups[g]) sass += name.find("__sass_") != std::string::npos;
    EXPECT_LE(sass, 1u) << "configuration " << g << " holds more than one SASS instruction metric";
  }
  EXPECT_EQ(cuda::counter_metric_names().size(), 10u);
}

// The counters of the first node of a model, measured in fp16 on the GPU.
NodeMeasurement measure_with_counters(const ModelBuilder& builder, const std::string& dtype = "fp16") {
  auto run = analyse(builder);
  auto backend = make_backend(false);
  MeasureOptions o;
  o.dtype = dtype;
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

// The calibration FMA kernels execute a known number of instructions: the counters must see
// them exactly (each SASS metric in a configuration of its own; kernel records paused).
TEST(MeasureCountersGpu, CountsTheFmaKernelsInstructionsExactly) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  cuda::Timing timing;
  cuda::RangeProfiler& profiler = timing.profiler();  // after the kernel timer, records on, as during --measure
  if (!profiler.ok()) GTEST_SKIP() << "profiler refused: " << profiler.error();
  void* sink = nullptr;
  ASSERT_EQ(cudaMalloc(&sink, 1 << 20), cudaSuccess);
  const int blocks = 132, threads = 256, iterations = 1000;
  double fp32_expected = 0, fp16_launched = 0;
  cuda::CounterValues fp32, fp16;
  std::string why;
  ASSERT_TRUE(profiler.profile([&](cudaStream_t s) { fp32_expected = cuda::launch_fma_fp32(static_cast<float*>(sink), blocks, threads, iterations, s); },
                               nullptr, &fp32, &why)) << why;
  ASSERT_TRUE(profiler.profile([&](cudaStream_t s) { fp16_launched = cuda::launch_fma_fp16(sink, blocks, threads, iterations, 8, s); },
                               nullptr, &fp16, &why)) << why;
  cudaFree(sink);
  std::printf("[counters] FMA fp32: %.0f counted, %.0f launched; HFMA2: %.0f counted, %.0f launched\n", fp32.fp32_flops,
              fp32_expected, fp16.fp16_flops, fp16_launched);
  // + 7 adds per thread summing the chains (1.0015 on the H100).
  EXPECT_NEAR(fp32.fp32_flops / fp32_expected, 1.0, 0.01);
  // The range counts the whole device: a few FP16 instructions from elsewhere (3% on the H100).
  EXPECT_LT(fp32.fp16_flops, 0.05 * fp32_expected);
  // An HFMA2 instruction counts as one FMA (2 FLOPs), as ncu counts it, though it does two.
  // nvcc's loop runs ~3% more FP16 instructions than the source's HFMA2s (1.032 on the H100).
  EXPECT_NEAR(fp16.fp16_flops / (fp16_launched / 2), 1.0, 0.05);
}

// A node through the backend: an fp32 Mul executes at least its one FMUL per element (the
// binary kernel, with its switch over the op, executed 1.56 FP32 instructions per element on
// the H100).
TEST(MeasureCountersGpu, Fp32MulCountsItsMultiplies) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  ModelBuilder b;
  b.input("a", kFloat, Shape{16, 1024, 1024}).input("b", kFloat, Shape{16, 1024, 1024});
  b.node("Mul", {"a", "b"}, {"y"});
  b.output("y");
  const NodeMeasurement m = measure_with_counters(b, "fp32");
  ASSERT_TRUE(m.measured) << m.reason;
  if (!m.has_counters && profiler_refused(m)) GTEST_SKIP() << "profiler refused: " << m.counters_reason;
  ASSERT_TRUE(m.has_counters) << m.counters_reason;
  std::printf("[counters] fp32 Mul: executed %.0f flops for 16777216 elements\n", m.executed_flops);
  EXPECT_GE(m.executed_flops, 16777216.0);
  EXPECT_LT(m.executed_flops, 3 * 16777216.0);
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

// After a range-profiler session (which pauses CUPTI's kernel records) a graph replay's kernels
// are recorded again, each under the external id of the launch, as the decode step reads them.
TEST(MeasureCountersGpu, GraphReplayKernelsKeepTheirExternalIdAfterProfiling) {
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU";
  cuda::Timing timing;
  cuda::RangeProfiler& profiler = timing.profiler();
  if (!profiler.ok()) GTEST_SKIP() << "profiler refused: " << profiler.error();
  cuda::CuptiTimer& timer = timing.cupti();
  ASSERT_TRUE(timer.ok()) << timer.error();
  float* sink = nullptr;
  ASSERT_EQ(cudaMalloc(&sink, 1 << 20), cudaSuccess);
  cuda::CounterValues counters;
  std::string why;
  ASSERT_TRUE(profiler.profile([&](cudaStream_t s) { cuda::launch_fma_fp32(sink, 4, 128, 10, s); }, nullptr, &counters, &why))
      << why;
  ASSERT_TRUE(timer.ok()) << "kernel records not back on after profiling: " << timer.error();
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  for (int k = 0; k < 3; ++k) cuda::launch_fma_fp32(sink, 4, 128, 10, stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  timer.collect();
  const uint64_t id = timer.next_external_id();
  timer.push(id);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  timer.pop();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  auto spans = timer.collect();
  EXPECT_EQ(spans[id].names.size(), 3u) << timer.unattributed() << " kernels carried no external id";
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(sink);
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
