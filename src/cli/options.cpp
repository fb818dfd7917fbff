#include "cli/options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "hardware/edit_distance.h"
#include "roofline/dtype_names.h"
#include "modelcost/errors.h"

namespace modelcost {

namespace {

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
        return digits ? "" : "expected a whole number >= 0, got '" + text + "'";
      },
      "");
}

// CLI::PositiveNumber's message prints the whole double range; this one says what is wanted.
CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool ok = ec == std::errc() && end == text.data() + text.size() && std::isfinite(value) && value > 0;
        return ok ? "" : "expected a number above 0, got '" + text + "'";
      },
      "");
}

// FP16, float16, half -> fp16 (the option's own check then names what is allowed).
CLI::Validator dtype_alias() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        text = canonical_dtype_name(text);
        return "";
      },
      "");
}

}  // namespace

CLI::Validator number_in_range(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        double value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool ok = ec == std::errc() && end == text.data() + text.size() && value >= low && value <= high;
        std::ostringstream range;
        range << "expected a number from " << low << " to " << high << ", got '" << text << "'";
        return ok ? "" : range.str();
      },
      "");
}

namespace {

void add_input_options(CLI::App& app, CliOptions& options) {
  app.add_option("model", options.model_path, "ONNX model file (weights need not be present)");
  // allow_extra_args(false): each --dim takes exactly one value, so `--dim batch=8 model.onnx` works.
  app.add_option("--dim", options.dims, "Set a symbolic input dim: NAME=VALUE (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--input", options.inputs, "Set a whole input shape: NAME=1x3x224x224 (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
}

void add_report_options(CLI::App& app, CliOptions& options) {
  const CLI::Validator non_negative = whole_number();
  app.add_option("--top", options.top, "Heaviest nodes (and op types) shown in the terminal")
      ->type_name("N")
      ->capture_default_str()
      ->check(non_negative);
  app.add_option("--csv", options.csv_path, "Write one row per node to FILE (- for stdout)")->type_name("FILE");
  app.add_option("--json", options.json_path, "Write the full report as JSON to FILE (- for stdout)")->type_name("FILE");
  app.add_option("--html", options.html_path, "Write one self-contained HTML page (totals, sortable nodes, roofline, plan) to FILE (- for stdout)")
      ->type_name("FILE");
  app.add_option("--by-module", options.by_module, "Totals per node-name scope, DEPTH levels deep (/layer1/0/conv1/Conv at 2: /layer1/0)")
      ->type_name("DEPTH")
      ->check(non_negative);
  app.add_flag("--by-op", options.by_op, "List every op type in the terminal summary, not only the first --top");
  app.add_flag("-q,--quiet", options.quiet, "Print nothing on stdout (files are still written)");
  app.add_flag("--strict", options.strict, "Fail when an op has no rule or a node is left without a shape");
  app.add_option("--ops", options.op_rule_files, "Rules (TOML) for ops without a built-in rule (repeatable; also $MODELCOST_OPS)")
      ->type_name("FILE");
}

void add_device_options(CLI::App& app, CliOptions& options) {
  const CLI::Validator positive = positive_number();
  // --gpu a100 --gpu h100 is the same list as --gpu a100,h100.
  app.add_option("--gpu", options.gpus, "Device from the hardware database (id or alias; a,b,c compares; auto = this machine's GPU)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->join(',');
  app.add_option("--dtype", options.dtype,
                 "Re-cost as if every float tensor were this type: fp16|bf16|fp32|tf32|fp8|int8 (any case; float16, half, bfloat16, float32 too)")
      ->type_name("TYPE")
      ->transform(dtype_alias());
  app.add_option("--hwdb", options.hwdb_dirs, "Extra device files: a directory of .toml files or one .toml (repeatable; also $MODELCOST_HWDB)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  app.add_flag("--list-gpus", options.list_gpus, "List the devices of the hardware database and exit");
  app.add_option("--peak-tflops", options.peak_tflops, "Custom device peak (TFLOP/s, every math path)")->check(positive);
  app.add_option("--bandwidth-gbps", options.bandwidth_gbps, "Custom device memory bandwidth (GB/s)")->check(positive);
  app.add_option("--roofline-svg", options.roofline_svg, "Write the roofline plot (SVG) to FILE (- for stdout)")->type_name("FILE");
  app.add_option("--view", options.view,
                 "Which kernels the verdict, plan and plot count: deployed (fused, as a runtime runs them) or as-written")
      ->check(CLI::IsMember({"deployed", "as-written"}))
      ->type_name("VIEW");
  app.add_option("--ceilings", options.ceilings,
                 "Device figures: achievable (measured ceilings where the hwdb gives them) or datasheet peaks")
      ->check(CLI::IsMember({"achievable", "datasheet"}))
      ->type_name("KIND");
  app.add_option("--groups-csv", options.groups_csv, "Write one row per fused kernel (group) to FILE (- for stdout)")->type_name("FILE");
}

void add_plan_options(CLI::App& app, CliOptions& options) {
  const CLI::Validator positive = positive_number();
  app.add_option("--batch", options.batches, "Capacity plan over these batch sizes, e.g. 1,8,32,128")->type_name("LIST");
  app.add_option("--batch-dim", options.batch_dim, "Name of the symbolic batch dim (default: the first input's first dim)")
      ->type_name("NAME");
  app.add_option("--target-qps", options.target_qps, "Plan for this many inferences per second")->check(positive);
  app.add_option("--latency-slo-ms", options.latency_slo_ms, "Latency limit per batch for the plan (ms)")->check(positive);
  app.add_option("--price-per-hour", options.prices, "Device price (USD per hour; one per --gpu device) for the plan's cost column")
      ->type_name("USD");
}

void add_measure_options(CLI::App& app, CliOptions& options) {
  app.add_flag("--measure", options.measure, "Time every node on this machine's GPU (or the CPU with --cpu)");
  app.add_flag("--cpu", options.cpu, "With --measure: time on the CPU reference backend");
  app.add_flag("--cold", options.cold, "With --measure: flush L2 before every sample");
  app.add_flag("--autotune", options.autotune, "With --measure: time candidate algorithms (cuBLASLt, cuDNN)");
  app.add_flag("--counters", options.counters,
               "With --measure on the GPU: DRAM bytes and executed FLOPs per node (CUPTI range profiler)");
}

// `diff --help`: the main command's options diff takes (CLI11 lists only a subcommand's own).
std::string diff_help_footer(const CLI::App& app) {
  static const std::set<std::string> not_for_diff = {"help", "version", "list-gpus", "html", "roofline-svg", "by-module",
                                                     "groups-csv"};
  std::string text = "Options (those of `modelcost MODEL`, applied to both models):\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || not_for_diff.count(option->get_lnames().front())) continue;
    std::string name = "--" + option->get_lnames().front();
    const std::string type = option->get_type_name().substr(0, option->get_type_name().find(':'));
    if (!type.empty() && option->get_expected_min() > 0) name += " " + type;
    text += "  " + name + std::string(name.size() < 26 ? 26 - name.size() : 1, ' ') + option->get_description() + "\n";
  }
  return text;
}

// calibrate, and diff A B (which takes the analysis options of the main command).
void add_subcommands(CLI::App& app, CliOptions& options) {
  auto* calibrate = app.add_subcommand("calibrate", "Measure this machine's achievable roofline and write it as a hwdb entry");
  calibrate->add_option("--gpu", options.gpus, "Datasheet device to compare with (auto = detect)")->type_name("NAME");
  calibrate->add_option("--out", options.calibrate_out, "Write the hwdb entry (TOML) to FILE")->type_name("FILE");
  calibrate->add_option("--kernels-csv", options.calibrate_kernels_csv,
                        "Write the grid of library kernels (one call per row) to FILE")->type_name("FILE");
  calibrate->add_option("--from-grid", options.calibrate_from_grid,
                        "Fit the kernel curves to a grid saved with --kernels-csv and print them (no GPU needed)")
      ->type_name("FILE");
  calibrate->add_option("--hwdb", options.hwdb_dirs, "Extra device files: a directory of .toml files, or one .toml")->type_name("PATH");
  calibrate->add_flag("--cpu", options.cpu, "Calibrate the CPU backend instead of the GPU");
  calibrate->add_flag("-q,--quiet", options.quiet, "Print nothing on stdout (--out and --kernels-csv are still written)");
  calibrate->callback([&options] { options.calibrate = true; });
  // diff A B takes the analysis options of the main command (--dim, --gpu, --csv, ...).
  auto* diff = app.add_subcommand("diff", "Compare two models: per node, per op type and in total (MACs, FLOPs, bytes, times)");
  diff->add_option("models", options.diff_models, "The two ONNX model files, A then B")->expected(2);
  diff->fallthrough();
  diff->footer(diff_help_footer(app));
  diff->callback([&options] { options.diff = true; });
}

}  // namespace

void add_cli_options(CLI::App& app, CliOptions& options) {
  add_input_options(app, options);
  add_report_options(app, options);
  add_device_options(app, options);
  add_plan_options(app, options);
  add_measure_options(app, options);
  add_subcommands(app, options);
}

std::string suggest_option(const CLI::App& app, const std::vector<std::string>& unknown) {
  for (const auto& word : unknown) {
    if (word.rfind("--", 0) != 0) continue;
    const std::string name = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
    std::string best;
    size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
    for (const CLI::Option* option : app.get_options())
      for (const auto& candidate : option->get_lnames()) {
        const size_t d = edit_distance(name, candidate);
        if (d < best_distance) best_distance = d, best = candidate;
      }
    if (!best.empty()) return "did you mean --" + best + "?";
  }
  return "";
}

namespace {

[[noreturn]] void usage(const std::string& option, const std::string& text, const std::string& why) {
  throw Error(kExitUsage, option + " '" + text + "': " + why);
}

// A decimal integer >= minimum that fits int64: digits only, no sign, no spaces.
bool parse_whole(const std::string& text, int64_t* value, int64_t minimum) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && *value >= minimum;
}

bool parse_positive(const std::string& text, int64_t* value) { return parse_whole(text, value, 1); }

std::pair<std::string, std::string> split_assignment(const std::string& option, const std::string& text,
                                                     const char* expected) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos) usage(option, text, std::string("expected ") + expected);
  std::string name = text.substr(0, eq);
  if (name.empty()) usage(option, text, std::string("missing NAME; expected ") + expected);
  return {std::move(name), text.substr(eq + 1)};
}

}  // namespace

std::pair<std::string, int64_t> parse_dim_assignment(const std::string& text) {
  if (text.find(',') != std::string::npos)
    usage("--dim", text, "one NAME=VALUE per --dim; write each dim as its own option, e.g. --dim batch=1 --dim seq=128");
  auto [name, value_text] = split_assignment("--dim", text, "NAME=VALUE, e.g. batch=8");
  int64_t value = 0;
  // 0 is allowed: an empty dim (a KV cache's past length before the first step).
  if (!parse_whole(value_text, &value, 0))
    usage("--dim", text, "VALUE must be a whole number >= 0 (got '" + value_text + "')");
  return {name, value};
}

std::pair<std::string, Shape> parse_input_assignment(const std::string& text) {
  auto [name, dims_text] = split_assignment("--input", text, "NAME=DIMS, e.g. input=1x3x224x224");
  if (dims_text.empty()) usage("--input", text, "missing DIMS; expected e.g. input=1x3x224x224");
  Shape shape;
  for (const auto& dim : split_at(dims_text, 'x')) {
    int64_t value = 0;
    if (!parse_positive(dim, &value))
      usage("--input", text, "every dim must be a positive integer, dims separated by 'x' (got '" + dim + "')");
    shape.push_back(value);
  }
  return {name, shape};
}

std::vector<std::string> split_at(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    items.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return items;
    start = at + 1;
  }
}

std::vector<double> parse_positive_list(const std::string& option, const std::string& text) {
  std::vector<double> values;
  for (const auto& item : split_at(text, ',')) {
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !std::isfinite(value) || value <= 0)
      usage(option, text, "expected numbers above 0 separated by commas, e.g. 2.5 or 2.5,4");
    values.push_back(value);
  }
  return values;
}

std::vector<int64_t> parse_batch_list(const std::string& text) {
  std::vector<int64_t> batches;
  for (const auto& item : split_at(text, ',')) {
    int64_t value = 0;
    if (!parse_positive(item, &value)) usage("--batch", text, "expected positive integers separated by commas, e.g. 1,8,32");
    batches.push_back(value);
  }
  return batches;
}

ShapeOptions shape_options_from(const CliOptions& options) {
  ShapeOptions shape_options;
  for (const auto& text : options.dims) {
    auto [name, value] = parse_dim_assignment(text);
    auto [it, inserted] = shape_options.dims.emplace(name, value);
    if (!inserted && it->second != value)
      usage("--dim", text, name + " is already set to " + std::to_string(it->second));
  }
  for (const auto& text : options.inputs) {
    auto [name, shape] = parse_input_assignment(text);
    auto [it, inserted] = shape_options.inputs.emplace(name, shape);
    if (!inserted && it->second != shape) usage("--input", text, name + " is already set to another shape");
  }
  return shape_options;
}

}  // namespace modelcost
