#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "modelcost/errors.h"
#include "modelcost/plan.h"
#include "load/model_loader.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// y[N,1024] = x[N,1024] @ W[1024,1024], fp32. Per batch N:
//   FLOPs 2*N*1024*1024 = 2097152 N; bytes 4*(1024N + 1048576 + 1024N) = 4194304 + 8192 N;
//   weights 4194304 bytes; peak activations x + y = 8192 N bytes.
// On a 10 TFLOP/s, 100 GB/s device with no launch overhead the node is memory-bound while
// 2097152 N / 1e13 < (4194304 + 8192 N) / 1e11, i.e. up to N = 327.
ModelBuilder matmul_model() {
  ModelBuilder b;
  b.input("x", kFloat, std::vector<std::string>{"N", "1024"});
  b.weight("W", kFloat, {1024, 1024});
  b.node("MatMul", {"x", "W"}, {"y"});
  b.output("y");
  return b;
}

// Analyses one loaded model per batch, as the CLI's plan does.
struct BatchRunner {
  Model model = load_model_from_bytes(matmul_model().bytes(), "matmul");
  int calls = 0;
  AnalysisForBatch callback() {
    return [this](int64_t batch) {
      AnalysisOptions options;
      options.dims["N"] = batch;
      ++calls;
      return analyze(model, options);
    };
  }
};

double latency_s(double n) { return std::max(2097152 * n / 1e13, (4194304 + 8192 * n) / 1e11); }

}  // namespace

TEST(CapacityPlan, ThroughputGrowsWithBatchUntilComputeBound) {
  BatchRunner runner;
  const Device device = make_custom_device(10, 100);
  PlanOptions options;
  options.batches = {1, 8, 32, 128, 512, 2048};
  options.search_max_batch = false;
  const CapacityPlan plan = plan_capacity(runner.callback(), device, options);
  ASSERT_EQ(plan.rows.size(), 6u);
  for (const auto& row : plan.rows) {
    EXPECT_NEAR(row.latency_ms, latency_s(row.batch) * 1e3, 1e-12) << row.batch;
    EXPECT_NEAR(row.throughput_per_s, row.batch / latency_s(row.batch), 1e-6) << row.batch;
  }
  // Memory-bound batches: strictly more throughput per step; compute-bound: flat at peak / FLOPs.
  for (size_t i = 1; i < 4; ++i) EXPECT_GT(plan.rows[i].throughput_per_s, plan.rows[i - 1].throughput_per_s * 1.5);
  const double compute_limit = 1e13 / 2097152;
  EXPECT_NEAR(plan.rows[4].throughput_per_s, compute_limit, 1e-6);
  EXPECT_NEAR(plan.rows[5].throughput_per_s, compute_limit, 1e-6);
  EXPECT_LT(plan.rows[3].throughput_per_s, compute_limit);
  EXPECT_EQ(runner.calls, 6);
}

TEST(CapacityPlan, MemoryFiguresAndLargestFittingBatch) {
  BatchRunner runner;
  // 10 MB: fits while 4194304 + 8192 N <= 1e7, i.e. N <= 708.
  const Device device = make_custom_device(10, 100, /*memory_gb=*/0.01);
  PlanOptions options;
  options.batches = {1, 512, 1024};
  const CapacityPlan plan = plan_capacity(runner.callback(), device, options);
  EXPECT_DOUBLE_EQ(plan.rows[0].weights_bytes, 4194304);
  EXPECT_DOUBLE_EQ(plan.rows[0].peak_activation_bytes, 8192);
  EXPECT_DOUBLE_EQ(plan.rows[1].memory_bytes, 4194304 + 8192.0 * 512);
  EXPECT_TRUE(plan.rows[1].fits);
  EXPECT_FALSE(plan.rows[2].fits);
  ASSERT_TRUE(plan.max_batch_fits);
  EXPECT_EQ(*plan.max_batch_fits, 708);
  ASSERT_TRUE(plan.max_batch_row);
  EXPECT_EQ(plan.max_batch_row->batch, 708);
  EXPECT_FALSE(plan.max_batch_capped);
  // Bisection between 512 and 1024 takes 9 more evaluations, not a linear scan.
  EXPECT_LE(runner.calls, 3 + 10);

  // A fixed reserve moves the limit: 4194304 + 8192 N + 1e6 <= 1e7 -> N <= 586.
  BatchRunner again;
  options.workspace_bytes = 1e6;
  const CapacityPlan reserved = plan_capacity(again.callback(), device, options);
  EXPECT_EQ(*reserved.max_batch_fits, 586);
  EXPECT_DOUBLE_EQ(reserved.rows[0].memory_bytes, 4194304 + 8192 + 1e6);
}

TEST(CapacityPlan, LargestBatchByDoublingAndTheEdgeCases) {
  BatchRunner runner;
  PlanOptions options;
  options.batches = {1};
  const CapacityPlan plan = plan_capacity(runner.callback(), make_custom_device(10, 100, 0.01), options);
  EXPECT_EQ(*plan.max_batch_fits, 708);  // doubling 1..1024, then bisection

  BatchRunner tiny;  // 1 MB cannot hold the 4 MB weight
  const CapacityPlan none = plan_capacity(tiny.callback(), make_custom_device(10, 100, 0.001), options);
  EXPECT_EQ(*none.max_batch_fits, 0);
  EXPECT_FALSE(none.rows[0].fits);
  EXPECT_FALSE(none.best);

  BatchRunner capped;
  options.max_batch_limit = 64;
  const CapacityPlan limit = plan_capacity(capped.callback(), make_custom_device(10, 100, 0.01), options);
  EXPECT_EQ(*limit.max_batch_fits, 64);
  EXPECT_TRUE(limit.max_batch_capped);

  BatchRunner unknown;  // no memory size: nothing to search against
  const CapacityPlan open = plan_capacity(unknown.callback(), make_custom_device(10, 100), options);
  EXPECT_FALSE(open.max_batch_fits);
  EXPECT_TRUE(open.rows[0].fits);
}

TEST(CapacityPlan, TargetQpsPicksTheBatchNeedingFewestDevices) {
  BatchRunner runner;
  PlanOptions options;
  options.batches = {1, 8, 32, 128};
  options.target_qps = 1e6;
  options.latency_slo_ms = 0.05;
  options.price_per_hour_usd = 3.6;
  const CapacityPlan plan = plan_capacity(runner.callback(), make_custom_device(10, 100, 0.01), options);
  // Latencies: 1 -> 0.04202 ms, 8 -> 0.04260, 32 -> 0.04456, 128 -> 0.05243 (misses the SLO).
  EXPECT_TRUE(plan.rows[2].meets_slo);
  EXPECT_FALSE(plan.rows[3].meets_slo);
  ASSERT_TRUE(plan.best);
  EXPECT_EQ(plan.best->batch, 32);
  const double throughput = 32 / latency_s(32);  // 718,065 inferences/s
  EXPECT_EQ(*plan.devices_needed, static_cast<int64_t>(std::ceil(1e6 / throughput)));
  EXPECT_EQ(*plan.devices_needed, 2);
  ASSERT_TRUE(plan.best->cost_per_million_usd);
  EXPECT_NEAR(*plan.best->cost_per_million_usd, 3.6 / 3600 / throughput * 1e6, 1e-12);

  // Without an SLO the largest fitting batch (708, compute-bound) serves the load on one device.
  BatchRunner open;
  options.latency_slo_ms.reset();
  const CapacityPlan relaxed = plan_capacity(open.callback(), make_custom_device(10, 100, 0.01), options);
  EXPECT_EQ(*relaxed.devices_needed, 1);
  EXPECT_GE(relaxed.best->throughput_per_s, 1e6);

  // An SLO nothing meets: no best batch, and a note saying why.
  BatchRunner strict;
  options.latency_slo_ms = 0.001;
  const CapacityPlan impossible = plan_capacity(strict.callback(), make_custom_device(10, 100, 0.01), options);
  EXPECT_FALSE(impossible.best);
  EXPECT_FALSE(impossible.devices_needed);
  ASSERT_FALSE(impossible.notes.empty());
  EXPECT_NE(impossible.notes.back().find("0.001 ms"), std::string::npos);
}

TEST(CapacityPlan, RejectsBadOptions) {
  BatchRunner runner;
  PlanOptions options;
  options.batches = {};
  EXPECT_THROW(plan_capacity(runner.callback(), make_custom_device(1, 1), options), Error);
  options.batches = {4, 0};
  EXPECT_THROW(plan_capacity(runner.callback(), make_custom_device(1, 1), options), Error);
  options.batches = {1};
  options.target_qps = -3;
  EXPECT_THROW(plan_capacity(runner.callback(), make_custom_device(1, 1), options), Error);
  EXPECT_EQ(runner.calls, 0);
}

TEST(CapacityPlan, ComparesDevicesSideBySide) {
  ShapeOptions shape;
  shape.dims["N"] = 8;
  auto run = analyse(matmul_model(), shape);
  const HardwareDb db = load_hardware_db({}, false);
  const Device slow = make_custom_device(10, 100, 0.004);  // 4 MB: does not fit
  RooflineOptions options;
  options.batch = 8;
  const auto rows = compare_devices(run->analysis, {&db.resolve("a100"), &db.resolve("h100"), &slow}, options);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].device->id, "a100-sxm4-80gb");
  // Each row is that device's deployed roofline latency (docs/roofline.md), the same as compute_roofline's.
  auto expected_ms = [&](const Device& d) { return compute_roofline(run->analysis, d, options).latency_ms(); };
  EXPECT_NEAR(rows[0].latency_ms, expected_ms(db.resolve("a100")), 1e-12);
  EXPECT_NEAR(rows[1].latency_ms, expected_ms(db.resolve("h100")), 1e-12);
  EXPECT_LT(rows[1].latency_ms, rows[0].latency_ms);  // the H100 dominates the A100
  EXPECT_NEAR(rows[1].throughput_per_s, 8 / (rows[1].latency_ms / 1e3), 1e-6);
  EXPECT_EQ(rows[0].memory_bound + rows[0].overhead_bound, 1u);
  EXPECT_TRUE(rows[0].fits);
  EXPECT_FALSE(rows[2].fits);
  EXPECT_DOUBLE_EQ(rows[2].memory_bytes, 4194304 + 8192.0 * 8);
  EXPECT_NE(rows[1].verdict.find("H100 SXM5 80GB"), std::string::npos);
}

}  // namespace modelcost::testing

namespace modelcost::testing {

TEST(CapacityPlan, NotesWhenTheBatchNeverReachesTheGraph) {
  // The model's input has a fixed batch of 4: every "batch" gives the same analysis.
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 1024});
  b.weight("W", kFloat, {1024, 1024});
  b.node("MatMul", {"x", "W"}, {"y"});
  b.output("y");
  std::unique_ptr<AnalysisRun> latest;
  int calls = 0;
  AnalysisForBatch same = [&](int64_t) {
    latest = analyse(b);
    ++calls;
    return latest->analysis;
  };
  PlanOptions options;
  options.batches = {1, 8};
  const CapacityPlan plan = plan_capacity(same, make_custom_device(10, 100, 80), options);
  EXPECT_FALSE(plan.max_batch_fits);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("does not change with the batch size"), std::string::npos);
  EXPECT_EQ(calls, 2);  // no search to 2^20
  options.batches = {1};
  calls = 0;
  const CapacityPlan single = plan_capacity(same, make_custom_device(10, 100, 80), options);
  EXPECT_FALSE(single.max_batch_fits);
  EXPECT_EQ(calls, 2);  // batch 1, then batch 2 shows no growth
}

}  // namespace modelcost::testing
