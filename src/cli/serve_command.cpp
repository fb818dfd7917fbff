#include "cli/serve_command.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <sstream>

#include "cli/llm_command.h"
#include "cli/options.h"
#include "cli/report_files.h"
#include "modelcost/errors.h"
#include "report/serve_report.h"
#include "roofline/dtype_names.h"
#include "serve/search.h"
#include "serve/serve.h"

namespace modelcost {
namespace {

constexpr double kMaxRate = 1e9;  // requests/s
constexpr int64_t kMaxLength = 1 << 24;
// --svg's rates: the workload's own times 2^(k/2), from an eighth to four times it.
const std::vector<double> kSweepFactors = {0.125, 0.177, 0.25, 0.354, 0.5, 0.707, 1, 1.414, 2, 2.828, 4};

int64_t parse_length(const std::string& option, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoll(text) < 1 || std::stoll(text) > kMaxLength)
    throw Error(kExitUsage, option + " '" + text + "': expected a length L or a range A:B of tokens, each 1 to 16777216");
  return std::stoll(text);
}

// "512" or "128:1024" (uniform between the two, inclusive).
LengthRange parse_range(const std::string& option, const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    const int64_t length = parse_length(option, text);
    return {length, length};
  }
  const LengthRange range{parse_length(option, text.substr(0, colon)), parse_length(option, text.substr(colon + 1))};
  if (range.low > range.high) throw Error(kExitUsage, option + " '" + text + "': the range's low end is above its high end");
  return range;
}

std::vector<ServeRequest> workload_of(const ServeCommandOptions& o, std::string& description) {
  if (o.rate.has_value() == !o.trace_path.empty()) throw Error(kExitUsage, "serve: give --rate R (Poisson arrivals) or --trace FILE");
  if (!o.trace_path.empty()) {
    description = "trace " + o.trace_path;
    return read_trace(o.trace_path);
  }
  WorkloadOptions w;
  w.rate = *o.rate;
  w.requests = o.requests;
  w.prompt = parse_range("--prompt-len", o.prompt_len);
  w.output = parse_range("--output-len", o.output_len);
  w.seed = o.seed;
  std::ostringstream text;
  text << "Poisson " << w.rate << " requests/s, prompt " << o.prompt_len << ", output " << o.output_len << " tokens, seed " << o.seed;
  description = text.str();
  return poisson_workload(w);
}

WorkloadOptions search_workload(const ServeCommandOptions& o, std::string& description) {
  if (!o.trace_path.empty()) throw Error(kExitUsage, "--search finds each configuration's rate itself: leave out --trace");
  WorkloadOptions w;
  w.requests = o.requests;
  w.prompt = parse_range("--prompt-len", o.prompt_len);
  w.output = parse_range("--output-len", o.output_len);
  w.seed = o.seed;
  description = std::to_string(o.requests) + " Poisson requests per trial, prompt " + o.prompt_len + ", output " + o.output_len +
                " tokens, seed " + std::to_string(o.seed);
  return w;
}

SchedulerOptions scheduler_of(const ServeCommandOptions& o) {
  SchedulerOptions s;
  s.kind = parse_scheduler(o.scheduler);
  s.max_batch = o.max_batch;
  s.chunk = o.chunk;
  s.reserve_bytes = o.workspace_gb * 1e9;
  s.pipeline_stages = o.pipeline_stages;
  return s;
}

LlmOptions step_options_of(const ServeCommandOptions& o) {
  LlmOptions step;
  const std::string dtype = canonical_dtype_name(o.dtype);
  step.precision = {dtype, dtype, dtype};
  step.tensor_parallel = o.tensor_parallel;
  step.workspace_bytes = o.workspace_gb * 1e9;
  return step;
}

std::vector<SearchDevice> search_devices(const HardwareDb& db, const ServeCommandOptions& o, std::vector<std::string>& notes) {
  const std::vector<std::string> names = split_at(o.gpu, ',');
  if (!o.prices_per_hour.empty() && o.prices_per_hour.size() != names.size())
    throw Error(kExitUsage, "--price-per-hour: give one price per --gpu device (" + std::to_string(names.size()) + ")");
  std::vector<SearchDevice> devices;
  for (size_t i = 0; i < names.size(); ++i) {
    SearchDevice d;
    d.device = &resolve_llm_device(db, names[i], notes);
    d.price_per_hour = o.prices_per_hour.empty() ? d.device->price_per_hour_usd.value_or(0) : o.prices_per_hour[i];
    devices.push_back(d);
  }
  return devices;
}

std::string render(const std::function<void(std::ostream&)>& printer) {
  std::ostringstream text;
  printer(text);
  return text.str();
}

}  // namespace

void add_serve_command(CLI::App& app, ServeCommandOptions& o) {
  auto* serve = app.add_subcommand("serve", "Simulate serving a decoder LLM: arrivals, batching, paged KV cache; TTFT, TPOT, throughput");
  serve->add_option("model", o.model_path, "ONNX decoder, Hugging Face config.json, or a folder holding one")->required();
  serve->add_option("--gpu", o.gpu, "Device from the hardware database (id or alias; auto = this machine's GPU; a,b,c with --search)")->type_name("NAME")->required();
  serve->add_option("--hwdb", o.hwdb_dirs, "Extra directory of device .toml files")->type_name("DIR")->allow_extra_args(false);
  serve->add_option("--dim", o.dims, "Set a symbolic input dim for recognition: NAME=VALUE")->type_name("NAME=VALUE")->allow_extra_args(false);
  serve->add_option("--rate", o.rate, "Requests per second (Poisson arrivals); with --search, the rate to serve at least cost")->check(number_in_range(1e-9, kMaxRate));
  serve->add_option("--trace", o.trace_path, "Arrivals from a file: CSV arrival_s,prompt_len,output_len or JSONL")->type_name("FILE");
  serve->add_option("--requests", o.requests, "Requests to simulate with --rate")->capture_default_str()->check(number_in_range(1, kMaxServeRequests));
  serve->add_option("--prompt-len", o.prompt_len, "Prompt tokens: L, or A:B uniform")->capture_default_str();
  serve->add_option("--output-len", o.output_len, "Output tokens: L, or A:B uniform")->capture_default_str();
  serve->add_option("--scheduler", o.scheduler, "static|continuous|chunked")->capture_default_str();
  serve->add_option("--max-batch", o.max_batch, "Most sequences in one iteration")->capture_default_str()->check(number_in_range(1, 65536));
  serve->add_option("--chunk", o.chunk, "Chunked: tokens per iteration (decodes, then prefill chunks)")->capture_default_str()->check(number_in_range(1, kMaxLength));
  serve->add_option("--tp", o.tensor_parallel, "Tensor-parallel devices")->capture_default_str()->check(number_in_range(1, 1024));
  serve->add_option("--pp", o.pipeline_stages, "Pipeline stages, each a --tp group holding its share of the layers")
      ->capture_default_str()
      ->check(number_in_range(1, 1024));
  serve->add_option("--dtype", o.dtype, "Every precision at once: fp32|fp16|bf16|fp8|int8")->type_name("TYPE");
  serve->add_option("--workspace-gb", o.workspace_gb, "Runtime reserve per device")->capture_default_str()->check(number_in_range(0, 1e6));
  serve->add_option("--seed", o.seed, "Seed of the arrivals and lengths")->capture_default_str();
  serve->add_option("--json", o.json_path, "Write the summary and every request as JSON to FILE (- for stdout)")->type_name("FILE");
  serve->add_option("--csv", o.csv_path, "Write one row per request to FILE (- for stdout)")->type_name("FILE");
  serve->add_option("--svg", o.svg_path,
                    "Write latency against rate to FILE (- for stdout): the workload simulated again at 1/8 to 4 times its rate")
      ->type_name("FILE");
  serve->add_flag("-q,--quiet", o.quiet, "Print nothing on stdout (files are still written)");
  serve->add_flag("--search", o.search, "Over the --gpu devices x TP 1,2,4,8 x PP 1-4 x max batch x chunk: the highest rate meeting the P99 SLOs, per dollar");
  serve->add_option("--ttft-slo-ms", o.ttft_slo_ms, "--search: limit on the P99 time to first token")->check(number_in_range(1e-9, 1e12));
  serve->add_option("--tpot-slo-ms", o.tpot_slo_ms, "--search: limit on the P99 time per output token")->check(number_in_range(1e-9, 1e12));
  serve->add_option("--price-per-hour", o.prices_per_hour, "--search: USD per device-hour, one per --gpu device (default the hwdb's)")
      ->delimiter(',')
      ->check(number_in_range(1e-9, 1e9));
  serve->callback([&o] { o.requested = true; });
}

namespace {

int run_search(const ServeCommandOptions& o, std::ostream& out) {
  if (!o.csv_path.empty() || !o.svg_path.empty())
    throw Error(kExitUsage, "--search reports to the terminal and --json; --csv and --svg are for one run");
  SearchOptions search;
  ServeRunInfo info;
  search.workload = search_workload(o, info.workload);
  search.scheduler = scheduler_of(o);
  search.step = step_options_of(o);
  search.ttft_slo_ms = o.ttft_slo_ms.value_or(0);
  search.tpot_slo_ms = o.tpot_slo_ms.value_or(0);
  search.target_rate = o.rate.value_or(0);  // with --search: the rate to serve at least cost
  const HardwareDb db = load_hardware_db(o.hwdb_dirs);
  std::vector<std::string> notes;
  search.devices = search_devices(db, o, notes);
  const DecoderModel decoder = read_llm_decoder(o.model_path, o.dims);
  const std::vector<SearchPoint> points = search_configurations(decoder, search);
  info.model = llm_model_name(o.model_path);
  if (!o.json_path.empty()) emit_report(o.json_path, render([&](std::ostream& s) { write_search_json(search, points, s); }), out);
  if (o.quiet || o.json_path == "-") return kExitOk;
  for (const std::string& note : notes) out << "note: " << note << "\n";
  print_search(info, search, points, out);
  return kExitOk;
}

int run_one(const ServeCommandOptions& o, std::ostream& out) {
  check_one_stdout_report({{"--json", o.json_path}, {"--csv", o.csv_path}, {"--svg", o.svg_path}});
  ServeRunInfo info;
  const std::vector<ServeRequest> requests = workload_of(o, info.workload);
  info.scheduler = scheduler_of(o);
  if (o.gpu.find(',') != std::string::npos) throw Error(kExitUsage, "--gpu: one device per run (several with --search)");
  const HardwareDb db = load_hardware_db(o.hwdb_dirs);
  std::vector<std::string> notes;
  const Device& device = resolve_llm_device(db, o.gpu, notes);
  const DecoderModel decoder = read_llm_decoder(o.model_path, o.dims);
  const StepSetup setup = make_step_setup(decoder, device, step_options_of(o));
  const ServeResult result = simulate_serving(setup, requests, info.scheduler);

  info.model = llm_model_name(o.model_path);
  info.device = device.name;
  info.tensor_parallel = o.tensor_parallel;
  info.pipeline_stages = o.pipeline_stages;
  info.weights_dtype = setup.weights.empty() ? "as stored" : setup.weights;
  info.kv_dtype = setup.kv;
  if (!o.json_path.empty()) emit_report(o.json_path, render([&](std::ostream& s) { write_serve_json(info, result, s); }), out);
  if (!o.csv_path.empty()) emit_report(o.csv_path, render([&](std::ostream& s) { write_serve_csv(result, s); }), out);
  if (!o.svg_path.empty()) {
    const std::vector<RatePoint> sweep = simulate_rates(setup, requests, info.scheduler, kSweepFactors);
    emit_report(o.svg_path, render([&](std::ostream& s) { write_serve_svg(info, sweep, s); }), out);
  }
  const bool report_on_stdout = o.json_path == "-" || o.csv_path == "-" || o.svg_path == "-";
  if (o.quiet || report_on_stdout) return kExitOk;
  for (const std::string& note : notes) out << "note: " << note << "\n";
  print_serve_summary(info, result, out);
  return kExitOk;
}

}  // namespace

int run_serve_command(const ServeCommandOptions& o, std::ostream& out) {
  return o.search ? run_search(o, out) : run_one(o, out);
}

}  // namespace modelcost
