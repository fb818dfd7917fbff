// Printers of a serving simulation (docs/llm.md, "Serving simulation"): a terminal summary, JSON
// and CSV with one row per request.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "serve/search.h"
#include "serve/serve.h"

namespace modelcost {

// What was simulated, for the reports' headers.
struct ServeRunInfo {
  std::string model, device, workload;  // workload: "Poisson 4 requests/s, seed 1" or the trace file
  std::string weights_dtype, kv_dtype;
  int64_t tensor_parallel = 1;
  int64_t pipeline_stages = 1;
  SchedulerOptions scheduler;
};

void print_serve_summary(const ServeRunInfo& info, const ServeResult& result, std::ostream& out);
// {"serve": {"model": ..., "scheduler": {...}, "ttft_ms": {...}, ..., "requests": [...]}}
void write_serve_json(const ServeRunInfo& info, const ServeResult& result, std::ostream& out);
// One row per request: arrival, lengths, TTFT, TPOT, latency, preemptions.
void write_serve_csv(const ServeResult& result, std::ostream& out);
// Latency against rate: TTFT and TPOT (P50, P99) and output tokens/s at each simulated rate.
void write_serve_svg(const ServeRunInfo& info, const std::vector<RatePoint>& points, std::ostream& out);

// The configurations that meet the SLOs, the best requests per dollar first, then the Pareto
// front of rate against cost per hour.
void print_search(const ServeRunInfo& info, const SearchOptions& options, const std::vector<SearchPoint>& points, std::ostream& out);
// {"search": {"ttft_slo_ms": ..., "tpot_slo_ms": ..., "configurations": [...]}}
void write_search_json(const SearchOptions& options, const std::vector<SearchPoint>& points, std::ostream& out);

}  // namespace modelcost
