// `modelcost llm MODEL ...`: the decoder-LLM serving plan (docs/llm.md).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "modelcost/hardware.h"
#include "modelcost/llm.h"

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
  int64_t prefill_chunk = 0;
  std::vector<std::string> iterations;
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

// Shared with `serve`: the decoder of an ONNX graph (recognised at the probe's dims, with the
// --dim values) or of a config.json (or a folder holding one).
DecoderModel read_llm_decoder(const std::string& model_path, const std::vector<std::string>& dims);
// --gpu NAME, or auto (this machine's GPU; a note says which entry it matched).
const Device& resolve_llm_device(const HardwareDb& db, const std::string& gpu, std::vector<std::string>& notes);
// "path/Llama-3-8B/config.json" (or the folder) is "Llama-3-8B"; any other file its stem.
std::string llm_model_name(const std::string& path);

}  // namespace modelcost
