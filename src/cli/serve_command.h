// `modelcost serve MODEL ...`: a serving simulation of a decoder LLM (docs/llm.md, "Serving simulation").
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI { class App; }

namespace modelcost {

struct ServeCommandOptions {
  bool requested = false;
  std::string model_path, gpu;
  std::vector<std::string> hwdb_dirs, dims;
  std::optional<double> rate;  // requests/s (Poisson); or trace_path
  std::string trace_path;
  int64_t requests = 200;
  std::string prompt_len = "512", output_len = "128";  // L or A:B (uniform)
  std::string scheduler = "continuous";
  int64_t max_batch = 256, chunk = 512;
  int64_t tensor_parallel = 1;
  int64_t pipeline_stages = 1;
  std::string dtype;
  double workspace_gb = 0.5;
  uint64_t seed = 1;
  std::string json_path, csv_path, svg_path;
  bool quiet = false;
  // --search: the highest rate per configuration meeting the P99 SLOs.
  bool search = false;
  std::optional<double> ttft_slo_ms, tpot_slo_ms;
  std::vector<double> prices_per_hour;  // one per --gpu device (else the hwdb's price)
};

void add_serve_command(CLI::App& app, ServeCommandOptions& options);
// Runs it; throws Error on bad input.
int run_serve_command(const ServeCommandOptions& options, std::ostream& out);

}  // namespace modelcost
