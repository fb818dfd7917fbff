#include "cli/llm_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <sstream>

#include "cli/llm_measure.h"
#include "cli/options.h"
#include "cli/report_files.h"
#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "modelcost/llm.h"
#include "modelcost/measure.h"
#include "ops/op_registry.h"
#include "report/llm_report.h"
#include "roofline/dtype_names.h"
#include "shapes/shape_engine.h"

namespace modelcost {
namespace {

std::vector<int64_t> parse_positive_list(const std::string& option, const std::string& text) {
  std::vector<int64_t> values;
  for (const std::string& item : split_at(text, ',')) {
    const bool digits = !item.empty() && item.size() <= 9 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(item) < 1)
      throw Error(kExitUsage, option + " '" + text + "': expected positive integers separated by commas");
    values.push_back(std::stoll(item));
  }
  return values;
}

Collective parse_collective(const std::string& text) {
  if (text == "ring") return Collective::kRing;
  if (text == "tree") return Collective::kTree;
  if (text == "best") return Collective::kBest;
  throw Error(kExitUsage, "--collective '" + text + "': expected ring, tree or best");
}

LlmOptions plan_options(const LlmCommandOptions& o) {
  LlmOptions p;
  p.prompt = o.prompt;
  p.generate = o.generate;
  p.prefill_chunk = o.prefill_chunk;
  for (const std::string& text : o.iterations) p.iterations.push_back(parse_iteration_mix(text));
  p.batches = parse_positive_list("--batch", o.batches);
  if (!o.contexts.empty()) p.contexts = parse_positive_list("--context", o.contexts);
  // Decoding starts after the prompt: a shorter context is a step that never runs.
  for (int64_t context : p.contexts)
    if (context < o.prompt)
      throw Error(kExitUsage, "--context " + std::to_string(context) + " is shorter than --prompt " +
                                  std::to_string(o.prompt) + ": a decode step's context is the prompt plus the tokens generated "
                                  "so far; give contexts of at least " + std::to_string(o.prompt));
  // --dtype sets every precision; the specific options override it.
  p.precision.weights = canonical_dtype_name(o.weights.empty() ? o.dtype : o.weights);
  p.precision.activations = canonical_dtype_name(o.activations.empty() ? o.dtype : o.activations);
  p.precision.kv_cache = canonical_dtype_name(o.kv_cache.empty() ? o.dtype : o.kv_cache);
  p.tensor_parallel = o.tensor_parallel;
  p.expert_parallel = o.expert_parallel;
  p.link = o.link;
  p.collective = parse_collective(o.collective);
  p.workspace_bytes = o.workspace_gb * 1e9;
  p.tpot_slo_ms = o.tpot_slo_ms;
  p.ttft_slo_ms = o.ttft_slo_ms;
  p.target_tokens_per_s = o.target_tokens_per_s;
  return p;
}

std::string render(const std::function<void(std::ostream&)>& printer) {
  std::ostringstream text;
  printer(text);
  return text.str();
}

// A model folder (a Hugging Face checkout) stands for its config.json.
std::string model_file(const std::string& path) {
  std::error_code ignored;
  const std::filesystem::path config = std::filesystem::path(path) / "config.json";
  return std::filesystem::is_directory(path, ignored) && std::filesystem::is_regular_file(config, ignored) ? config.string() : path;
}

}  // namespace

// --gpu auto: the hwdb entry of this machine's GPU, as the main command resolves it.
const Device& resolve_llm_device(const HardwareDb& db, const std::string& gpu, std::vector<std::string>& notes) {
  if (gpu != "auto") return db.resolve(gpu);
  DeviceInfo local;
  if (cuda_support_compiled()) {
    try {
      local = make_backend(false)->device();
    } catch (const Error&) {  // no module, driver or GPU: said below
    }
  }
  if (!local.is_gpu) throw Error(kExitUsage, "--gpu auto: no local NVIDIA GPU found; name the device with --gpu NAME");
  const Device* device = match_local_device(db, local.name, local.multiprocessors, local.memory_bytes / 1e9);
  if (!device)
    throw Error(kExitUsage, "--gpu auto: '" + local.name + "' matches no hwdb entry; add one with --hwdb (modelcost calibrate writes one)");
  notes.push_back("--gpu auto: this machine's " + local.name + " is " + device->id + " (" + device->name + ")");
  return *device;
}

// The decoder of an ONNX graph (recognised at the probe's dims) or of a config.json.
DecoderModel read_llm_decoder(const std::string& model_path, const std::vector<std::string>& dims) {
  const std::string file = model_file(model_path);
  if (looks_like_json(file)) {  // a config.json, or JSON that says why it is not one
    if (!dims.empty()) throw Error(kExitUsage, "--dim sets a graph's dims; a config.json has none");
    return decoder_from_config(file);
  }
  Model model = load_model(model_path);
  CliOptions dims_only;
  dims_only.dims = dims;
  ShapeOptions shape_options = shape_options_from(dims_only);
  const RecognitionProbe probe;
  for (const auto& [name, value] : probe_dims(model, probe)) shape_options.dims.emplace(name, value);
  const Analysis analysis = analyze(model, shape_options);
  return recognise_decoder(analysis);
}

// "path/Llama-3-8B/config.json" (or the folder itself) is "Llama-3-8B"; any other file its stem.
std::string llm_model_name(const std::string& path) {
  const std::filesystem::path p(model_file(path));
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.stem().string();
}

// Bounds that keep the plan's arithmetic finite: token counts and devices stay below any dim.
constexpr double kMaxTokens = 1125899906842624.0;  // 2^50
constexpr double kMaxDevices = 1e6;
constexpr double kMaxWorkspaceGb = 1e6;
constexpr double kMaxMilliseconds = 1e12;
constexpr double kMaxTokensPerSecond = 1e15;

void add_llm_command(CLI::App& app, LlmCommandOptions& o) {
  auto* llm = app.add_subcommand("llm", "Serving plan of a decoder LLM: prefill, decode, KV cache, tokens/s, concurrency");
  llm->add_option("model", o.model_path, "ONNX decoder (weights need not be present), Hugging Face config.json, or a folder holding one")->required();
  llm->add_option("--gpu", o.gpu, "Device from the hardware database (id or alias; auto = this machine's GPU)")
      ->type_name("NAME")
      ->required();
  llm->add_option("--hwdb", o.hwdb_dirs, "Extra directory of device .toml files")->type_name("DIR")->allow_extra_args(false);
  llm->add_option("--dim", o.dims, "Set a symbolic input dim for recognition: NAME=VALUE")->type_name("NAME=VALUE")->allow_extra_args(false);
  llm->add_option("--prompt", o.prompt, "Prompt tokens per sequence")->capture_default_str()->check(number_in_range(1, kMaxTokens));
  llm->add_option("--generate", o.generate, "Generated tokens per sequence")->capture_default_str()->check(number_in_range(1, kMaxTokens));
  llm->add_option("--prefill-chunk", o.prefill_chunk, "Chunked prefill: the prompt in steps of N tokens (default one step)")
      ->type_name("N")
      ->check(number_in_range(1, kMaxTokens));
  llm->add_option("--iteration", o.iterations,
                  "A serving iteration to price (and --measure): PxCHUNK@PAST prefill chunks, D@CONTEXT decodes, or both "
                  "joined by '+', e.g. 1x512@0+32@1024; repeatable or a comma list")
      ->type_name("MIX")
      ->delimiter(',')
      ->allow_extra_args(false);
  llm->add_option("--batch", o.batches, "Concurrent sequences, e.g. 1,8,32")->type_name("LIST")->capture_default_str();
  llm->add_option("--context", o.contexts, "Decode contexts to report, e.g. 128,2048 (default prompt + generate)")->type_name("LIST");
  llm->add_option("--dtype", o.dtype, "Every precision at once: fp32|fp16|bf16|fp8|int8")->type_name("TYPE");
  llm->add_option("--weights", o.weights, "Weight precision: fp32|fp16|bf16|fp8|int8|int4 (default as stored)")->type_name("TYPE");
  llm->add_option("--activations", o.activations, "Activation precision: fp32|fp16|bf16|fp8|int8")->type_name("TYPE");
  llm->add_option("--kv-cache", o.kv_cache, "KV cache precision: fp32|fp16|bf16|fp8|int8")->type_name("TYPE");
  llm->add_option("--tp", o.tensor_parallel, "Tensor-parallel devices")->capture_default_str()->check(number_in_range(1, kMaxDevices));
  llm->add_option("--ep", o.expert_parallel, "Expert-parallel devices: routed experts spread over N devices (a multiple of --tp)")
      ->capture_default_str()
      ->check(number_in_range(1, kMaxDevices));
  llm->add_option("--link", o.link, "Interconnect for --tp: nvlink|pcie (default nvlink where the device has it)")->type_name("LINK");
  llm->add_option("--collective", o.collective, "All-reduce algorithm: ring|tree|best")->capture_default_str();
  llm->add_option("--workspace-gb", o.workspace_gb, "Runtime reserve per device (CUDA context, library workspaces)")
      ->capture_default_str()
      ->check(number_in_range(0, kMaxWorkspaceGb));
  llm->add_option("--tpot-slo-ms", o.tpot_slo_ms, "Limit on the mean time per output token")->check(number_in_range(1e-9, kMaxMilliseconds));
  llm->add_option("--ttft-slo-ms", o.ttft_slo_ms, "Limit on the time to first token")->check(number_in_range(1e-9, kMaxMilliseconds));
  llm->add_option("--target-tokens-per-s", o.target_tokens_per_s, "Generated tokens per second to serve")->check(number_in_range(1e-9, kMaxTokensPerSecond));
  llm->add_option("--json", o.json_path, "Write the plan as JSON to FILE (- for stdout)")->type_name("FILE");
  llm->add_option("--csv", o.csv_path, "Write one row per batch x context to FILE (- for stdout)")->type_name("FILE");
  llm->add_option("--svg", o.svg_path, "Write TPOT and tokens/s against batch (SVG) to FILE (- for stdout)")->type_name("FILE");
  llm->add_flag("-q,--quiet", o.quiet, "Print nothing on stdout (files are still written)");
  llm->add_flag("--measure", o.measure, "Run the prefill graph and a decode step per context on this machine's GPU");
  llm->callback([&o] { o.requested = true; });
}

int run_llm_command(const LlmCommandOptions& o, std::ostream& out) {
  const LlmOptions options = plan_options(o);
  check_one_stdout_report({{"--json", o.json_path}, {"--csv", o.csv_path}, {"--svg", o.svg_path}});
  const HardwareDb db = load_hardware_db(o.hwdb_dirs);
  std::vector<std::string> device_notes;
  const Device& device = resolve_llm_device(db, o.gpu, device_notes);
  const DecoderModel decoder = read_llm_decoder(o.model_path, o.dims);
  LlmPlan plan = plan_llm(decoder, device, options);
  plan.notes.insert(plan.notes.begin(), device_notes.begin(), device_notes.end());
  if (o.measure) {
    std::unique_ptr<Backend> backend;
    try {
      backend = make_backend(false);
    } catch (const Error& e) {  // its hint (--cpu) is not an option of this command
      const std::string why = e.what();
      throw Error(e.code(), "--measure runs on an NVIDIA GPU: " + why.substr(0, why.find("; use --cpu")));
    }
    LlmMeasureRequest request;
    request.model_path = o.model_path;
    CliOptions dims_only;
    dims_only.dims = o.dims;
    for (const auto& dim : shape_options_from(dims_only).dims) request.user_dims.push_back(dim);
    if (plan.act_dtype == "fp32" || plan.act_dtype == "fp16" || plan.act_dtype == "bf16") request.dtype = plan.act_dtype;
    plan.measured = measure_llm_steps(request, plan, *backend);
  }

  const std::string name = llm_model_name(o.model_path);
  // A report on stdout ("-") takes it whole: the table is left out.
  if (!o.json_path.empty()) emit_report(o.json_path, render([&](std::ostream& s) { write_llm_json(plan, name, s); }), out);
  if (!o.csv_path.empty()) emit_report(o.csv_path, render([&](std::ostream& s) { write_llm_csv(plan, s); }), out);
  if (!o.svg_path.empty()) emit_report(o.svg_path, render([&](std::ostream& s) { write_llm_svg(plan, name, s); }), out);
  const bool report_on_stdout = o.json_path == "-" || o.csv_path == "-" || o.svg_path == "-";
  if (!o.quiet && !report_on_stdout) print_llm_plan(plan, name, out);
  return kExitOk;
}

}  // namespace modelcost
