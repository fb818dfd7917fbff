// `modelcost llm MODEL ...`: the decoder-LLM serving plan (docs/llm.md).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI { class App; }

namespace modelcost {

struct LlmCommandOptions {
  bool requested = false;
  std::string model_path;
  std::string gpu;
  std::vector<std::string> hwdb_dirs;
  std::vector<std::string> dims;
  int64_t prompt = 512;
  int64_t generate = 256;
  std::string batches = "1";
  std::string contexts;
  std::string dtype, weights, activations, kv_cache;
  int64_t tensor_parallel = 1;
  int64_t expert_parallel = 1;  // --ep: routed experts over N devices
  std::string link, collective = "best";
  double workspace_gb = 0.5;
  std::optional<double> tpot_slo_ms, ttft_slo_ms, target_tokens_per_s;
  std::string json_path, csv_path, svg_path;
  bool quiet = false;
  bool measure = false;  // run the prefill and decode graphs on this machine's GPU
};

// Declares the `llm` subcommand on `app`, bound to `options`.
void add_llm_command(CLI::App& app, LlmCommandOptions& options);
// Runs it; throws Error on bad input.
int run_llm_command(const LlmCommandOptions& options, std::ostream& out);

}  // namespace modelcost
