#include <gtest/gtest.h>

#include <cmath>

#include "llm/llm_test_support.h"
#include "modelcost/errors.h"
#include "serve/serve.h"

namespace modelcost::testing {
namespace {

struct Fixture {
  DecoderModel model = decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/llama-3-8b.json");
  Device device = test_device();
  StepSetup setup() const {
    LlmOptions options;
    options.precision = {"fp16", "fp16", "fp16"};
    return make_step_setup(model, device, options);
  }
};

WorkloadOptions workload(double rate, int64_t requests, int64_t prompt = 512, int64_t output = 64) {
  WorkloadOptions w;
  w.rate = rate;
  w.requests = requests;
  w.prompt = {prompt, prompt};
  w.output = {output, output};
  w.seed = 7;
  return w;
}

SchedulerOptions scheduler(SchedulerKind kind) {
  SchedulerOptions o;
  o.kind = kind;
  return o;
}

const SchedulerKind kAll[] = {SchedulerKind::kStatic, SchedulerKind::kContinuous, SchedulerKind::kChunked};

TEST(Serve, AtATrickleTheMeanTtftIsOnePrefill) {
  const Fixture f;
  const StepSetup s = f.setup();
  const double prefill_ms = predict_deployed_step(s, StepMix::uniform(0, 0, 1, 512, 0)).total_ms();
  for (SchedulerKind kind : {SchedulerKind::kStatic, SchedulerKind::kContinuous}) {
    const ServeResult r = simulate_serving(s, poisson_workload(workload(0.01, 30)), scheduler(kind));
    EXPECT_NEAR(r.ttft_ms.mean, prefill_ms, 0.01 * prefill_ms) << scheduler_name(kind);
  }
  // Chunked prefill with a chunk as long as the prompt is one prefill as well.
  SchedulerOptions chunked = scheduler(SchedulerKind::kChunked);
  chunked.chunk = 512;
  const ServeResult r = simulate_serving(s, poisson_workload(workload(0.01, 30)), chunked);
  EXPECT_NEAR(r.ttft_ms.mean, prefill_ms, 0.01 * prefill_ms);
}

TEST(Serve, P99TtftNeverFallsAsTheRateRises) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : kAll) {
    double previous = 0;
    for (double rate : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0}) {
      const ServeResult r = simulate_serving(s, poisson_workload(workload(rate, 400)), scheduler(kind));
      EXPECT_GE(r.ttft_ms.p99, previous * 0.999) << scheduler_name(kind) << " at " << rate << " requests/s";
      previous = r.ttft_ms.p99;
    }
  }
}

TEST(Serve, BelowSaturationTokensPerSecondIsRateTimesOutput) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : kAll) {
    const ServeResult r = simulate_serving(s, poisson_workload(workload(4, 2000, 256, 128)), scheduler(kind));
    EXPECT_FALSE(r.saturated) << scheduler_name(kind);
    EXPECT_NEAR(r.output_tokens_per_s, 4 * 128, 0.05 * 4 * 128) << scheduler_name(kind);
  }
}

TEST(Serve, LittlesLawHoldsForRequestsInFlight) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : kAll)
    for (double rate : {2.0, 20.0}) {
      const ServeResult r = simulate_serving(s, poisson_workload(workload(rate, 1000)), scheduler(kind));
      const double littles = r.requests_per_s * r.latency_ms.mean * 1e-3;
      EXPECT_NEAR(r.mean_in_flight, littles, 0.05 * littles) << scheduler_name(kind) << " at " << rate;
    }
}

SchedulerOptions pipelined(SchedulerKind kind, int64_t stages) {
  SchedulerOptions o = scheduler(kind);
  o.pipeline_stages = stages;
  return o;
}

TEST(Serve, PipelineStagesAddTheirTransfersToOnePrefill) {
  const Fixture f;
  StepSetup s = f.setup();
  s.link_gbps = 100;
  s.link_latency_us = 10;
  const double prefill_ms = predict_deployed_step(s, StepMix::uniform(0, 0, 1, 512, 0)).total_ms();
  const double transfer_ms = 10e-3 + 512.0 * static_cast<double>(f.model.hidden) * 2 / 100e9 * 1e3;
  for (int64_t stages : {2, 4}) {
    const ServeResult r = simulate_serving(s, poisson_workload(workload(0.01, 30)), pipelined(SchedulerKind::kContinuous, stages));
    EXPECT_NEAR(r.ttft_ms.mean, prefill_ms + static_cast<double>(stages - 1) * transfer_ms, 0.01 * prefill_ms) << stages;
  }
}

TEST(Serve, PipelineStagesHoldMoreOfTheCache) {
  const Fixture f;
  const StepSetup s = f.setup();
  const int64_t one = kv_block_budget(s, scheduler(SchedulerKind::kContinuous), 512);
  const int64_t two = kv_block_budget(s, pipelined(SchedulerKind::kContinuous, 2), 512);
  EXPECT_GT(two, one);  // half the weights per device: more room for each engine's cache
  const ServeResult r = simulate_serving(s, poisson_workload(workload(1, 50)), pipelined(SchedulerKind::kContinuous, 2));
  EXPECT_EQ(r.kv_blocks, 2 * two);  // two engines, their blocks over the whole pipeline
}

TEST(Serve, PipelineStagesServeMoreWhenFlooded) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : kAll) {
    const double one = simulate_serving(s, poisson_workload(workload(10000, 400)), scheduler(kind)).requests_per_s;
    const ServeResult two = simulate_serving(s, poisson_workload(workload(10000, 400)), pipelined(kind, 2));
    // Two batches in flight; a static batch's long prefill beside the other engine's decodes leaves
    // bubbles, chunked iterations of one size few.
    EXPECT_GT(two.requests_per_s, (kind == SchedulerKind::kChunked ? 1.6 : 1.3) * one) << scheduler_name(kind);
    EXPECT_EQ(two.requests.size(), 400u);
    for (size_t i = 1; i < two.requests.size(); ++i) EXPECT_LE(two.requests[i - 1].request.arrival_s, two.requests[i].request.arrival_s);
  }
}

TEST(Serve, PipelineLayersSplitAsVllmSplitsThem) {
  EXPECT_EQ(pipeline_layer_split(32, 4), (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(pipeline_layer_split(22, 4), (std::vector<int64_t>{5, 6, 6, 5}));
  EXPECT_EQ(pipeline_layer_split(61, 4), (std::vector<int64_t>{15, 15, 16, 15}));
  EXPECT_EQ(pipeline_layer_split(7, 3), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(pipeline_layer_split(5, 1), (std::vector<int64_t>{5}));
}

TEST(Serve, PipelineStagesAddUpToTheWholeStep) {
  for (const char* config : {"llama-3-8b.json", "qwen1.5-moe-a2.7b.json"}) {
    Fixture f;
    f.model = decoder_from_config(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + config);
    if (f.model.experts.moe_layers > 0) f.model.experts.moe_layers -= 3;  // dense layers first, as DeepSeek's
    const StepSetup s = f.setup();
    const std::vector<IterationPricer::Slice> mixed = {{256, 512}, {1, 900}, {1, 2000}};
    const double whole = IterationPricer(s).iteration_ms(mixed);
    for (int64_t stages : {2, 3, 4}) {
      IterationPricer pricer(s, stages);
      const std::vector<double> ms = pricer.stage_ms(mixed);
      ASSERT_EQ(ms.size(), static_cast<size_t>(stages));
      double sum = 0;
      for (double stage : ms) sum += stage;
      EXPECT_NEAR(sum, whole, 1e-9 * whole) << config << " " << stages;
      EXPECT_GT(ms.back(), ms.front()) << config << " " << stages;  // the LM head on the last stage
    }
  }
}

TEST(Serve, AFloodedPipelineRunsAtItsSlowestStagesPace) {
  const Fixture f;
  const StepSetup s = f.setup();
  const ServeResult flooded = simulate_serving(s, poisson_workload(workload(10000, 400)), pipelined(SchedulerKind::kChunked, 2));
  ASSERT_EQ(flooded.stage_busy.size(), 2u);
  for (double busy : flooded.stage_busy) EXPECT_LE(busy, 1 + 1e-9);
  EXPECT_GT(flooded.stage_busy[1], 0.95);  // the LM head's stage never waits
  EXPECT_LT(flooded.stage_busy[0], flooded.stage_busy[1]);
  const ServeResult trickle = simulate_serving(s, poisson_workload(workload(0.01, 30)), pipelined(SchedulerKind::kChunked, 2));
  for (double busy : trickle.stage_busy) EXPECT_LT(busy, 0.1);
}

TEST(Serve, LittlesLawHoldsAcrossPipelineEngines) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (double rate : {2.0, 20.0}) {
    const ServeResult r = simulate_serving(s, poisson_workload(workload(rate, 1000)), pipelined(SchedulerKind::kChunked, 2));
    const double littles = r.requests_per_s * r.latency_ms.mean * 1e-3;
    EXPECT_NEAR(r.mean_in_flight, littles, 0.05 * littles) << rate;
  }
}

TEST(Serve, PipelineStagesBetweenNodesSendOverTheNetwork) {
  Fixture f;
  f.device.interconnect = {{"nvlink_gbps", 100}, {"nvlink_latency_us", 10}, {"node_gpus", 2},
                           {"infiniband_gbps", 10}, {"infiniband_latency_us", 40}};
  const StepSetup s = f.setup();
  const double prefill_ms = predict_deployed_step(s, StepMix::uniform(0, 0, 1, 512, 0)).total_ms();
  const double bytes = 512.0 * static_cast<double>(f.model.hidden) * 2;
  const double inside = 10e-3 + bytes / 100e9 * 1e3, between = 40e-3 + bytes / 10e9 * 1e3;
  // Four stages of one device on nodes of two: stages 1-2 and 3-4 share a node, 2-3 do not.
  EXPECT_EQ(stage_boundaries_between_nodes(s, 4), 1);
  const ServeResult r = simulate_serving(s, poisson_workload(workload(0.01, 20)), pipelined(SchedulerKind::kContinuous, 4));
  EXPECT_NEAR(r.ttft_ms.mean, prefill_ms + 2 * inside + between, 0.01 * prefill_ms);
  // Without the network's figures a pipeline over nodes is refused, not priced over NVLink.
  f.device.interconnect.erase("infiniband_gbps");
  EXPECT_THROW(simulate_serving(f.setup(), poisson_workload(workload(0.01, 5)), pipelined(SchedulerKind::kContinuous, 4)), Error);
  EXPECT_NO_THROW(simulate_serving(f.setup(), poisson_workload(workload(0.01, 5)), pipelined(SchedulerKind::kContinuous, 2)));
}

TEST(Serve, PipelineStagesPastTheLayersAreRefused) {
  const Fixture f;
  const StepSetup s = f.setup();
  EXPECT_THROW(simulate_serving(s, poisson_workload(workload(1, 5)), pipelined(SchedulerKind::kContinuous, f.model.layers + 1)), Error);
  EXPECT_THROW(simulate_serving(s, poisson_workload(workload(1, 5)), pipelined(SchedulerKind::kContinuous, 0)), Error);
}

TEST(Serve, ARateSweepScalesTheArrivalsAlone) {
  const Fixture f;
  const StepSetup s = f.setup();
  const std::vector<ServeRequest> requests = poisson_workload(workload(2, 100));
  const SchedulerOptions options = scheduler(SchedulerKind::kContinuous);
  const std::vector<double> factors = {0.5, 1, 4, 64};
  const std::vector<RatePoint> points = simulate_rates(s, requests, options, factors);
  ASSERT_EQ(points.size(), 4u);
  const ServeResult direct = simulate_serving(s, requests, options);
  EXPECT_DOUBLE_EQ(points[1].result.ttft_ms.p99, direct.ttft_ms.p99);  // factor 1 is the workload itself
  EXPECT_NEAR(points[1].rate, offered_rate(requests), 1e-12);
  for (size_t i = 0; i < points.size(); ++i) EXPECT_TRUE(points[i].result.requests.empty());
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_NEAR(points[i].rate / points[0].rate, factors[i] / factors[0], 1e-9);
    EXPECT_GE(points[i].result.ttft_ms.p99, points[i - 1].result.ttft_ms.p99);
  }
  EXPECT_TRUE(points.back().result.saturated);  // 128 requests/s of 512-token prompts outrun one H100
  EXPECT_THROW(simulate_rates(s, {ServeRequest{}}, options, {1}), Error);  // one arrival has no rate
}

TEST(Serve, SaturationIsFlaggedWhenArrivalsOutrunService) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : kAll) {
    const ServeResult flooded = simulate_serving(s, poisson_workload(workload(10000, 2000)), scheduler(kind));
    EXPECT_TRUE(flooded.saturated) << scheduler_name(kind);
    // Flooded, the engine finishes requests as fast as it can: twice that is saturated, half is not.
    const double capacity = flooded.requests_per_s;
    EXPECT_TRUE(simulate_serving(s, poisson_workload(workload(2 * capacity, 2000)), scheduler(kind)).saturated) << scheduler_name(kind);
    EXPECT_FALSE(simulate_serving(s, poisson_workload(workload(capacity / 2, 2000)), scheduler(kind)).saturated) << scheduler_name(kind);
  }
}

TEST(Serve, PreemptionOnlyWhenTheCacheIsTiny) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (SchedulerKind kind : {SchedulerKind::kContinuous, SchedulerKind::kChunked}) {
    SchedulerOptions tiny = scheduler(kind);
    tiny.kv_blocks = 70;  // two prompts (64 blocks), not both growths (8 more)
    const ServeResult squeezed = simulate_serving(s, poisson_workload(workload(50, 100)), tiny);
    EXPECT_GT(squeezed.preemptions, 0) << scheduler_name(kind);
    EXPECT_NEAR(squeezed.output_tokens_per_s * squeezed.duration_s, 100 * 64, 1e-6);  // every token still comes out
    const ServeResult roomy = simulate_serving(s, poisson_workload(workload(50, 100)), scheduler(kind));
    EXPECT_EQ(roomy.preemptions, 0) << scheduler_name(kind);
  }
  SchedulerOptions tiny_static = scheduler(SchedulerKind::kStatic);
  tiny_static.kv_blocks = 70;
  EXPECT_EQ(simulate_serving(s, poisson_workload(workload(50, 100)), tiny_static).preemptions, 0);
}

TEST(Serve, ASeedGivesTheSameRun) {
  const Fixture f;
  const StepSetup s = f.setup();
  WorkloadOptions w = workload(8, 300);
  w.prompt = {64, 1024};
  w.output = {8, 256};
  const ServeResult a = simulate_serving(s, poisson_workload(w), scheduler(SchedulerKind::kChunked));
  const ServeResult b = simulate_serving(s, poisson_workload(w), scheduler(SchedulerKind::kChunked));
  EXPECT_EQ(a.ttft_ms.p99, b.ttft_ms.p99);
  EXPECT_EQ(a.latency_ms.mean, b.latency_ms.mean);
  EXPECT_EQ(a.iterations, b.iterations);
  w.seed = 8;
  const ServeResult c = simulate_serving(s, poisson_workload(w), scheduler(SchedulerKind::kChunked));
  EXPECT_NE(a.latency_ms.mean, c.latency_ms.mean);
}

TEST(Serve, ChunkedPrefillKeepsDecodesGoing) {
  // Long prompts arriving among decodes stall them under continuous batching, not under chunking.
  const Fixture f;
  const StepSetup s = f.setup();
  const auto requests = poisson_workload(workload(6, 400, 4096, 128));
  const ServeResult continuous = simulate_serving(s, requests, scheduler(SchedulerKind::kContinuous));
  const ServeResult chunked = simulate_serving(s, requests, scheduler(SchedulerKind::kChunked));
  EXPECT_LT(chunked.tpot_ms.p99, continuous.tpot_ms.p99);
}

TEST(Serve, BoundsAndBadValuesAreRefused) {
  const Fixture f;
  const StepSetup s = f.setup();
  for (double rate : {std::nan(""), double(INFINITY), -1.0, 0.0}) EXPECT_THROW(poisson_workload(workload(rate, 10)), Error);
  EXPECT_THROW(poisson_workload(workload(1, kMaxServeRequests + 1)), Error);
  SchedulerOptions few = scheduler(SchedulerKind::kContinuous);
  few.max_iterations = 10;
  EXPECT_THROW(simulate_serving(s, poisson_workload(workload(1, 10)), few), Error);
  SchedulerOptions small = scheduler(SchedulerKind::kContinuous);
  small.kv_blocks = 4;  // 512 + 64 tokens need 36
  EXPECT_THROW(simulate_serving(s, poisson_workload(workload(1, 10)), small), Error);
  EXPECT_THROW(parse_scheduler("fifo"), Error);
}

TEST(Serve, PercentilesAreNearestRank) {
  std::vector<double> values;
  for (int i = 1; i <= 100; ++i) values.push_back(i);
  const Percentiles p = percentiles_of(values);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p90, 90);
  EXPECT_EQ(p.p99, 99);
  EXPECT_DOUBLE_EQ(p.mean, 50.5);
}

}  // namespace
}  // namespace modelcost::testing

namespace modelcost::testing {
namespace {

TEST(ServeIteration, ADecodeBatchAtOneContextCostsTheStepModelsDecodeStep) {
  // B sequences decoding one token each at the same context: the plan's deployed decode step.
  const Fixture f;
  const StepSetup s = f.setup();
  IterationPricer pricer(s);
  for (int64_t batch : {1, 8, 64, 256}) {
    const std::vector<IterationPricer::Slice> slices(static_cast<size_t>(batch), IterationPricer::Slice{1, 1000});
    const double expected = predict_deployed_decode(s, batch, 1001).total_ms();
    EXPECT_NEAR(pricer.iteration_ms(slices), expected, 1e-9 * expected) << batch;
  }
  // A prompt alone is the plan's prefill.
  EXPECT_NEAR(pricer.iteration_ms({{512, 0}}), predict_deployed_step(s, StepMix::uniform(0, 0, 1, 512, 0)).total_ms(), 1e-9);
  // A chunk beside decodes is one step of both, each attention once.
  StepMix mix = StepMix::uniform(3, 700, 1, 128, 256);
  const std::vector<IterationPricer::Slice> mixed = {{128, 256}, {1, 699}, {1, 699}, {1, 699}};
  EXPECT_NEAR(pricer.iteration_ms(mixed), predict_deployed_step(s, mix).total_ms(), 1e-9);
  const StepTime step = predict_deployed_step(s, mix);
  EXPECT_DOUBLE_EQ(step.kernels, static_cast<double>(deployed_step_kernels(*s.model, {true, true, 1, 1})));
}

}  // namespace
}  // namespace modelcost::testing
