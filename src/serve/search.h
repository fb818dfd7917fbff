// Configuration search: for each device x tensor parallelism x pipeline stages x max batch x chunk, the highest
// Poisson rate whose P99 TTFT and TPOT meet the SLOs (bisection on the rate), its requests per
// dollar, and the Pareto front of rate against cost (docs/llm.md, "Searching configurations").
#pragma once
#include <string>
#include <vector>

#include "serve/serve.h"

namespace modelcost {

struct SearchDevice {
  const Device* device = nullptr;
  double price_per_hour = 0;  // USD per device
};

struct SearchOptions {
  std::vector<SearchDevice> devices;
  std::vector<int64_t> tensor_parallel = {1, 2, 4, 8};
  std::vector<int64_t> pipeline_stages = {1, 2, 3, 4};
  std::vector<int64_t> max_batches = {64, 256};
  std::vector<int64_t> chunks = {512, 2048};  // chunked scheduler only
  LlmOptions step;                 // precisions, collective
  SchedulerOptions scheduler;      // kind and reserve; max batch and chunk are searched
  WorkloadOptions workload;        // requests, lengths, seed; the rate is searched
  double ttft_slo_ms = 0, tpot_slo_ms = 0;
  int64_t bisection_steps = 10;
  // > 0: also the cheapest way to serve this many requests/s: each configuration's replicas
  // behind a load balancer (each replica takes an equal share of the Poisson arrivals).
  double target_rate = 0;
};

struct SearchPoint {
  std::string device;
  int64_t tensor_parallel = 1, pipeline_stages = 1, max_batch = 0, chunk = 0;
  double cost_per_hour = 0;        // all the configuration's devices
  double max_rate = 0;             // requests/s meeting the SLOs; 0 when none does
  double requests_per_dollar = 0;
  double p99_ttft_ms = 0, p99_tpot_ms = 0;  // at max_rate
  bool pareto = false;             // no other point serves more for no more cost per hour
  std::string skipped;             // why the configuration was not simulated ("" when it was)
  // With a target rate: replicas of this configuration that serve it, and their cost per hour
  // (0 where the configuration meets the SLOs at no rate).
  int64_t replicas = 0;
  double cost_for_target_per_hour = 0;
};

// Every configuration, the best requests per dollar first. Throws Error(kExitUsage) for bad SLOs.
std::vector<SearchPoint> search_configurations(const DecoderModel& model, const SearchOptions& options);
// With a target rate: the configurations that serve it, the cheapest per hour first (then the
// fewest devices); empty without one.
std::vector<SearchPoint> cheapest_for_target(const std::vector<SearchPoint>& points);

}  // namespace modelcost
