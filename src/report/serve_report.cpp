#include "report/serve_report.h"

#include <nlohmann/json.hpp>

#include "report/number_format.h"

namespace modelcost {
namespace {

nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"mean", p.mean}};
}

void print_percentiles(const std::string& name, const Percentiles& p, std::ostream& out) {
  out << "  " << name << "  P50 " << three_digits(p.p50) << "  P90 " << three_digits(p.p90) << "  P99 "
      << three_digits(p.p99) << "  mean " << three_digits(p.mean) << "\n";
}

}  // namespace

void print_serve_summary(const ServeRunInfo& info, const ServeResult& r, std::ostream& out) {
  const SchedulerOptions& s = info.scheduler;
  out << "Serving " << info.model << " on " << info.device << (info.tensor_parallel > 1 ? " x" + std::to_string(info.tensor_parallel) + " (TP)" : "")
      << (info.pipeline_stages > 1 ? " x" + std::to_string(info.pipeline_stages) + " (PP)" : "")
      << ", weights " << info.weights_dtype << ", KV cache " << info.kv_dtype << "\n";
  out << "  scheduler " << scheduler_name(s.kind) << ", max batch " << s.max_batch
      << (s.kind == SchedulerKind::kChunked ? ", chunk " + std::to_string(s.chunk) + " tokens" : "") << "; " << info.workload << "\n";
  out << "  " << r.requests.size() << " requests in " << three_digits(r.duration_s) << " s simulated, " << r.iterations
      << " iterations\n\n";
  out << "Latency (ms)\n";
  print_percentiles("TTFT   ", r.ttft_ms, out);
  print_percentiles("TPOT   ", r.tpot_ms, out);
  print_percentiles("latency", r.latency_ms, out);
  out << "\nThroughput  " << three_digits(r.requests_per_s) << " requests/s, " << three_digits(r.output_tokens_per_s)
      << " output tokens/s; " << three_digits(r.mean_in_flight) << " requests in flight on average\n";
  out << "KV cache    " << r.kv_blocks << " blocks of " << s.block_tokens << " tokens"
      << (info.pipeline_stages > 1 ? " (whole-model blocks, over the pipeline)" : " per device") << "; use mean "
      << human_share(r.mean_kv_use) << ", peak " << human_share(r.peak_kv_use) << "; " << r.preemptions << " preemptions\n";
  if (!r.stage_busy.empty()) {
    out << "Pipeline    stages busy";
    for (size_t i = 0; i < r.stage_busy.size(); ++i) out << (i ? ", " : " ") << human_share(r.stage_busy[i]);
    out << " of the time (the rest waiting for a batch: bubbles)\n";
  }
  if (r.saturated)
    out << "\nSaturated: the queue was still growing at the last arrival; the rate is above what this configuration serves, "
           "and the latencies depend on how many requests are simulated.\n";
}

void write_serve_json(const ServeRunInfo& info, const ServeResult& r, std::ostream& out) {
  const SchedulerOptions& s = info.scheduler;
  nlohmann::json requests = nlohmann::json::array();
  for (const RequestOutcome& o : r.requests)
    requests.push_back({{"arrival_s", o.request.arrival_s}, {"prompt_len", o.request.prompt}, {"output_len", o.request.output},
                        {"ttft_ms", o.ttft_ms()}, {"tpot_ms", o.tpot_ms()}, {"latency_ms", o.latency_ms()},
                        {"preemptions", o.preemptions}});
  nlohmann::json serve = {
      {"model", info.model}, {"device", info.device}, {"tensor_parallel", info.tensor_parallel},
      {"pipeline_stages", info.pipeline_stages},
      {"weights_dtype", info.weights_dtype}, {"kv_dtype", info.kv_dtype}, {"workload", info.workload},
      {"scheduler", {{"kind", scheduler_name(s.kind)}, {"max_batch", s.max_batch}, {"chunk", s.chunk}, {"block_tokens", s.block_tokens}}},
      {"ttft_ms", percentiles_json(r.ttft_ms)}, {"tpot_ms", percentiles_json(r.tpot_ms)},
      {"latency_ms", percentiles_json(r.latency_ms)}, {"duration_s", r.duration_s},
      {"requests_per_s", r.requests_per_s}, {"output_tokens_per_s", r.output_tokens_per_s},
      {"mean_in_flight", r.mean_in_flight}, {"kv_blocks", r.kv_blocks}, {"mean_kv_use", r.mean_kv_use},
      {"peak_kv_use", r.peak_kv_use}, {"preemptions", r.preemptions}, {"iterations", r.iterations},
      {"stage_busy", r.stage_busy},
      {"saturated", r.saturated}, {"requests", requests}};
  out << nlohmann::json{{"serve", serve}}.dump(2) << "\n";
}

void write_serve_csv(const ServeResult& r, std::ostream& out) {
  out << "request,arrival_s,prompt_len,output_len,ttft_ms,tpot_ms,latency_ms,preemptions\n";
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestOutcome& o = r.requests[i];
    out << i + 1 << "," << exact_number(o.request.arrival_s) << "," << o.request.prompt << "," << o.request.output << ","
        << exact_number(o.ttft_ms()) << "," << exact_number(o.tpot_ms()) << "," << exact_number(o.latency_ms()) << ","
        << o.preemptions << "\n";
  }
}

}  // namespace modelcost
