#include <gtest/gtest.h>

#include "llm/llm_test_support.h"
#include "modelcost/errors.h"
#include "serve/search.h"

namespace modelcost::testing {
namespace {

struct SearchFixture {
  DecoderModel model = decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/llama-3-8b.json");
  Device fast = test_device(80), slow = make_custom_device(250, 500, 40, 0);
  SearchOptions options() const {
    SearchOptions o;
    o.devices = {{&fast, 4.0}, {&slow, 1.0}};
    o.tensor_parallel = {1, 2};
    o.pipeline_stages = {1, 2};
    o.max_batches = {32, 128};
    o.scheduler.kind = SchedulerKind::kChunked;
    o.step.precision = {"fp16", "fp16", "fp16"};
    o.workload.requests = 100;
    o.workload.prompt = {512, 512};
    o.workload.output = {64, 64};
    o.ttft_slo_ms = 500;
    o.tpot_slo_ms = 40;
    return o;
  }
};

ServeResult run_at(const DecoderModel& model, const Device& device, const SearchOptions& o, const SearchPoint& p, double rate) {
  LlmOptions step = o.step;
  step.tensor_parallel = p.tensor_parallel;
  WorkloadOptions w = o.workload;
  w.rate = rate;
  SchedulerOptions s = o.scheduler;
  s.max_batch = p.max_batch;
  s.chunk = p.chunk;
  s.pipeline_stages = p.pipeline_stages;
  return simulate_serving(make_step_setup(model, device, step), poisson_workload(w), s);
}

TEST(ServeSearch, TheRateFoundMeetsTheSlosAndATenthMoreDoesNot) {
  const SearchFixture f;
  const SearchOptions o = f.options();
  const std::vector<SearchPoint> points = search_configurations(f.model, o);
  ASSERT_EQ(points.size(), 2u * 2 * 2 * 2 * 2);  // devices x TP x PP x max batch x chunk
  const SearchPoint& best = points.front();
  ASSERT_GT(best.max_rate, 0);
  const Device& device = best.device == f.fast.id ? f.fast : f.slow;
  const ServeResult at = run_at(f.model, device, o, best, best.max_rate);
  EXPECT_LE(at.ttft_ms.p99, o.ttft_slo_ms);
  EXPECT_LE(at.tpot_ms.p99, o.tpot_slo_ms);
  const ServeResult above = run_at(f.model, device, o, best, best.max_rate * 1.1);
  EXPECT_TRUE(above.ttft_ms.p99 > o.ttft_slo_ms || above.tpot_ms.p99 > o.tpot_slo_ms || above.saturated);
  for (size_t i = 1; i < points.size(); ++i) EXPECT_LE(points[i].requests_per_dollar, points[i - 1].requests_per_dollar);
}

TEST(ServeSearch, TheParetoFrontHoldsTheFastestAndTheCheapest) {
  const SearchFixture f;
  const std::vector<SearchPoint> points = search_configurations(f.model, f.options());
  const SearchPoint* fastest = nullptr;
  for (const SearchPoint& p : points) {
    if (p.max_rate > 0 && (!fastest || p.max_rate > fastest->max_rate)) fastest = &p;
    for (const SearchPoint& q : points)  // nothing on the front is beaten on both counts
      if (p.pareto) EXPECT_FALSE(q.max_rate > p.max_rate && q.cost_per_hour < p.cost_per_hour);
  }
  ASSERT_NE(fastest, nullptr);
  EXPECT_TRUE(fastest->pareto);
}

TEST(ServeSearch, ATargetRateIsServedByTheCheapestReplicas) {
  const SearchFixture f;
  SearchOptions o = f.options();
  o.target_rate = 50;
  const std::vector<SearchPoint> points = search_configurations(f.model, o);
  for (const SearchPoint& p : points) {
    if (p.max_rate <= 0) {
      EXPECT_EQ(p.replicas, 0);
      continue;
    }
    // The fewest replicas whose shares each stay within the configuration's rate.
    EXPECT_GE(static_cast<double>(p.replicas) * p.max_rate, o.target_rate);
    EXPECT_LT(static_cast<double>(p.replicas - 1) * p.max_rate, o.target_rate);
    EXPECT_DOUBLE_EQ(p.cost_for_target_per_hour, static_cast<double>(p.replicas) * p.cost_per_hour);
  }
  const std::vector<SearchPoint> cheapest = cheapest_for_target(points);
  ASSERT_FALSE(cheapest.empty());
  for (size_t i = 1; i < cheapest.size(); ++i) EXPECT_LE(cheapest[i - 1].cost_for_target_per_hour, cheapest[i].cost_for_target_per_hour);
  o.target_rate = -1;
  EXPECT_THROW(search_configurations(f.model, o), Error);
  EXPECT_TRUE(cheapest_for_target(search_configurations(f.model, f.options())).empty());  // no target, no answer
}

TEST(ServeSearch, SlosAndPricesAreRequired) {
  const SearchFixture f;
  SearchOptions o = f.options();
  o.ttft_slo_ms = 0;
  EXPECT_THROW(search_configurations(f.model, o), Error);
  o = f.options();
  o.devices[1].price_per_hour = 0;
  EXPECT_THROW(search_configurations(f.model, o), Error);
}

}  // namespace
}  // namespace modelcost::testing
