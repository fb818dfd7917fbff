#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <new>
#include <sstream>

#include "cli/completeness.h"
#include "cli/hardware_stage.h"
#include "cli/input_checks.h"
#include "cli/llm_command.h"
#include "cli/serve_command.h"
#include "cli/options.h"
#include "cli/progress_bar.h"
#include "cli/report_files.h"
#include "cli/version.h"
#include "cli/version_info.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "modelcost/llm.h"
#include "ops/op_registry.h"
#include "ops/user_rules.h"
#include "report/csv_writer.h"
#include "report/deployed_measured.h"
#include "report/group_columns.h"
#include "modelcost/measure.h"
#include "report/html_writer.h"
#include "report/json_writer.h"
#include "report/model_diff.h"
#include "report/module_summary.h"
#include "report/measured_columns.h"
#include "report/roofline_columns.h"
#include "report/roofline_svg.h"
#include "report/report.h"
#include "report/table_printer.h"
#include "shapes/batch_dim.h"

namespace modelcost {
namespace {

bool starts_with_file(const std::string& message, const std::string& file) {
  return !file.empty() && message.compare(0, file.size() + 1, file + ":") == 0;
}

void print_error(std::ostream& err, const CliOptions& options, const std::string& message) {
  err << "modelcost: error: " << one_line_error(options, message) << std::endl;
}

MeasureOptions measure_options(const CliOptions& options) {
  MeasureOptions m;
  m.cold = options.cold;
  m.autotune = options.autotune;
  m.dtype = options.dtype;
  m.cpu = options.cpu;
  m.counters = options.counters;
  return m;
}

void check_measure_options(const CliOptions& options) {
  if (!options.measure && (options.cold || options.autotune || (options.cpu && !options.calibrate)))
    throw Error(kExitUsage, "--cpu, --cold and --autotune go with --measure");
  if (options.counters && (!options.measure || options.cpu))
    throw Error(kExitUsage, "--counters goes with --measure on the GPU (not --cpu)");
  if (options.measure && !options.dtype.empty() && options.dtype != "fp32" && options.dtype != "tf32" &&
      options.dtype != "fp16" && options.dtype != "bf16")
    throw Error(kExitUsage, "--measure runs fp32, tf32, fp16 or bf16, not --dtype " + options.dtype);
}

// --counters reads GPU counters: without a GPU, say so rather than suggest --cpu, which it refuses.
std::unique_ptr<Backend> measuring_backend(const CliOptions& options) {
  try {
    return make_backend(options.cpu);
  } catch (const Error& e) {
    if (!options.counters) throw;
    std::string why = e.what();
    why = why.substr(0, why.find("; use --cpu"));
    throw Error(e.code(), "--counters needs this machine's NVIDIA GPU: " + why);
  }
}

std::string render(const std::function<void(std::ostream&)>& printer) {
  std::ostringstream text;
  printer(text);
  return text.str();
}

// Where each measured node lands on the roofline plot: its FLOPs over its median time, at the
// measured intensity when counters saw its FLOPs, else at the analytic one.
std::vector<MeasuredPoint> measured_points(const Analysis& analysis, const RooflineReport& roofline,
                                           const std::vector<NodeMeasurement>& measured) {
  std::vector<MeasuredPoint> points(measured.size());
  for (size_t i = 0; i < measured.size() && i < analysis.nodes.size(); ++i) {
    const NodeMeasurement& m = measured[i];
    const NodeCost& c = analysis.nodes[i].cost;
    if (!m.measured || m.median_us <= 0 || c.flops <= 0) continue;
    MeasuredPoint& p = points[i];
    p.present = true;
    p.achieved_flops = c.flops / (m.median_us * 1e-6);
    p.measured_intensity = m.has_counters && m.has_executed_flops && m.measured_intensity > 0;
    // The analytic intensity at the roofline's dtype (the one measured).
    p.intensity = p.measured_intensity ? m.measured_intensity : roofline.nodes[i].intensity;
  }
  return points;
}

// What every run needs before a model is read: parsed shapes, checked paths and options, and the
// measuring device (--gpu auto needs its name, and a missing GPU is reported before any work).
struct RunSetup {
  ShapeOptions shape_options;
  std::unique_ptr<Backend> backend;
  DeviceInfo local;
};

RunSetup set_up(const CliOptions& options) {
  RunSetup setup;
  setup.shape_options = shape_options_from(options);
  check_report_paths(options);
  HardwareStage::check_options(options);
  check_measure_options(options);
  setup.backend = options.measure ? measuring_backend(options) : nullptr;
  const bool auto_gpu = options.gpus.find("auto") != std::string::npos;
  if (auto_gpu && !setup.backend && cuda_support_compiled()) {
    try {
      setup.backend = make_backend(false);
    } catch (const Error&) {  // reported by HardwareStage as "no local NVIDIA GPU found"
    }
  }
  if (setup.backend && setup.backend->device().is_gpu) setup.local = setup.backend->device();
  return setup;
}

// One model through the pipeline, with everything its report points into kept alive together.
struct AnalysedModel {
  std::unique_ptr<Model> model;
  std::unique_ptr<Analysis> analysis;
  std::unique_ptr<Report> report;
  std::unique_ptr<HardwareStage> hardware;
  std::vector<NodeMeasurement> measured;
  ModelMeasurement whole;
  std::unique_ptr<DeployedMeasurement> deployed;  // --measure in the deployed view
  std::string svg;  // the roofline plot, when --roofline-svg or --html asks for it
};

// The fusion groups timed as the kernels a runtime runs (beside the per-node measurement).
void measure_deployed_view(AnalysedModel& run, Backend& backend, const MeasureOptions& options) {
  const RooflineReport* roofline = run.hardware ? run.hardware->roofline() : nullptr;
  std::shared_ptr<const FusionPlan> plan = roofline && roofline->fusion ? roofline->fusion
                                                                        : std::make_shared<const FusionPlan>(fuse(*run.analysis));
  run.deployed = std::make_unique<DeployedMeasurement>(backend.measure_deployed(*run.analysis, *plan, options));
  add_deployed_measurement(*run.report, *run.deployed, *plan, roofline);
}

std::unique_ptr<AnalysedModel> analyse(const CliOptions& options, const std::string& path, RunSetup& setup,
                                       std::ostream& err) {
  auto run = std::make_unique<AnalysedModel>();
  if (is_model_config(path)) throw Error(kExitUsage, describe_model_config(path));
  run->model = std::make_unique<Model>(load_model(path));
  Model& model = *run->model;
  check_shape_options(model, setup.shape_options);
  // With --batch, the per-node analysis (and measurement) runs at the first batch of the list.
  ShapeOptions run_options = setup.shape_options;
  if (!options.batches.empty()) {
    const BatchDim dim = find_batch_dim(model, setup.shape_options, options.batch_dim);
    run_options = with_batch(model, setup.shape_options, dim, parse_batch_list(options.batches).front());
  }
  const OpRegistry& registry = registry_with_user_rules(options.op_rule_files);
  run_options.registry = &registry;
  Analysis analysed;
  try {
    analysed = analyze(model, run_options);
  } catch (const Error& e) {
    if (options.batches.empty()) throw;
    throw Error(kExitUsage, "--batch " + std::to_string(parse_batch_list(options.batches).front()) +
                                ": the model does not run at that batch (the file may fix its batch; see --batch-dim): " + e.what());
  }
  run->analysis = std::make_unique<Analysis>(std::move(analysed));
  const Analysis& analysis = *run->analysis;
  check_completeness(analysis, registry, options.strict, err);
  run->report = std::make_unique<Report>(build_report(analysis, kModelcostVersion));
  Report& report = *run->report;

  if (HardwareStage::requested(options)) {
    const DeviceInfo& local = setup.local;
    run->hardware = std::make_unique<HardwareStage>(options, local.name, local.multiprocessors, local.memory_bytes / 1e9);
    run->hardware->run(model, run_options, analysis, report);
  } else {
    show_figures_at_dtype(report, options.dtype);  // --dtype without a device: sizes only
  }
  if (options.measure) {
    MeasureOptions m = measure_options(options);
    ProgressBar bar("measuring");
    m.progress = [&bar](size_t done, size_t total, const std::string& name) { bar.update(done, total, name); };
    run->measured = measure_nodes(analysis, *setup.backend, m);
    m.progress = nullptr;
    run->whole = measure_model(analysis, *setup.backend, m, run->measured);
    add_measurements(report, run->measured, run->whole, setup.backend->device(), run->hardware ? run->hardware->roofline() : nullptr);
    if (options.counters) add_counter_columns(report, run->measured);
    if (options.view == "deployed" && !options.cpu) measure_deployed_view(*run, *setup.backend, m);
  }
  if (options.by_module >= 0) add_module_summary(report, static_cast<size_t>(options.by_module));
  if (run->hardware && (!options.roofline_svg.empty() || !options.html_path.empty()))
    run->svg = run->hardware->svg(analysis, measured_points(analysis, *run->hardware->roofline(), run->measured));
  return run;
}

int analyse_and_report(const CliOptions& options, std::ostream& out, std::ostream& err) {
  if (options.model_path.empty()) throw Error(kExitUsage, "no model file given (see modelcost --help)");
  RunSetup setup = set_up(options);
  const std::unique_ptr<AnalysedModel> run = analyse(options, options.model_path, setup, err);
  const Report& report = *run->report;
  if (!options.roofline_svg.empty()) emit_report(options.roofline_svg, run->svg, out);
  if (!options.csv_path.empty()) emit_report(options.csv_path, csv_report_text(report), out);
  if (!options.groups_csv.empty()) {
    std::ostringstream groups;
    write_groups_csv(*run->analysis, *run->hardware->roofline(), groups, run->deployed.get());
    emit_report(options.groups_csv, groups.str(), out);
  }
  if (!options.json_path.empty()) emit_report(options.json_path, json_report_text(report), out);
  if (!options.html_path.empty())
    emit_report(options.html_path, render([&](std::ostream& s) { write_html(report, HtmlOptions{run->svg}, s); }), out);
  // A report on stdout stays machine-readable: no table, the warnings on stderr.
  if (report_to_stdout(options)) {
    if (!options.quiet)
      for (const auto& warning : run->analysis->warnings) err << "modelcost: warning: " << warning << "\n";
  } else if (!options.quiet) {
    TableOptions table;
    table.top = static_cast<size_t>(options.top);
    table.all_op_types = options.by_op;
    print_table(report, table, out);
  }
  return kExitOk;
}

// modelcost diff A B: both models through the same options, then the comparison.
int diff_models(const CliOptions& options, std::ostream& out, std::ostream& err) {
  if (options.diff_models.size() != 2) throw Error(kExitUsage, "diff takes two model files: modelcost diff A.onnx B.onnx");
  const char* not_for_diff = !options.html_path.empty() ? "--html" : !options.roofline_svg.empty() ? "--roofline-svg"
                             : options.by_module >= 0 ? "--by-module" : nullptr;
  if (not_for_diff) throw Error(kExitUsage, std::string(not_for_diff) + " is not a diff report (diff writes --csv and --json)");
  RunSetup setup = set_up(options);
  const auto a = analyse(options, options.diff_models[0], setup, err);
  const auto b = analyse(options, options.diff_models[1], setup, err);
  const ModelDiff diff = diff_reports(*a->report, *b->report);
  if (!options.csv_path.empty()) emit_report(options.csv_path, render([&](std::ostream& s) { write_diff_csv(diff, s); }), out);
  if (!options.json_path.empty()) emit_report(options.json_path, render([&](std::ostream& s) { write_diff_json(diff, s); }), out);
  if (!options.quiet && !report_to_stdout(options)) print_diff(diff, static_cast<size_t>(options.top), out);
  return kExitOk;
}

int list_gpus(const CliOptions& options, std::ostream& out) {
  out << format_device_list(load_hardware_db(options.hwdb_dirs));
  return kExitOk;
}

// calibrate --from-grid: the curves of a saved grid, as calibrate prints and writes them.
int refit_grid(const CliOptions& options, std::ostream& out) {
  std::ifstream in(options.calibrate_from_grid);
  if (!in) throw Error(kExitUnreadable, "cannot read '" + options.calibrate_from_grid + "'");
  std::stringstream text;
  text << in.rdbuf();
  CalibrationResult result;
  result.device.name = options.calibrate_from_grid;
  result.library_kernels = parse_library_kernels_csv(text.str(), options.calibrate_from_grid);
  result.library_curves = fit_library_curves(result.library_kernels);
  result.library_gap_us = median_library_gap_us(result.library_kernels);
  out << format_calibration(result);
  std::string toml = calibration_to_hwdb_toml(result, "grid");
  const size_t at = toml.find("[achievable.kernels]");
  out << "\n" << (at == std::string::npos ? "" : toml.substr(at, toml.find("\n\n", at) - at)) << "\n";
  return kExitOk;
}

int calibrate(const CliOptions& options, std::ostream& terminal) {
  std::ostringstream discarded;  // -q: the files are still written, nothing is printed
  std::ostream& out = options.quiet ? discarded : terminal;
  if (!options.calibrate_from_grid.empty()) return refit_grid(options, out);
  std::unique_ptr<Backend> backend = make_backend(options.cpu);
  const DeviceInfo local = backend->device();
  MeasureOptions m;
  m.cpu = options.cpu;
  const CalibrationResult result = backend->calibrate(m);
  // The datasheet figures to compare with: the named entry, or the one matching this GPU.
  std::map<std::string, double> datasheet;
  const HardwareDb db = load_hardware_db(options.hwdb_dirs);
  const Device* sheet = nullptr;
  if (!options.gpus.empty() && options.gpus != "auto") sheet = &db.resolve(options.gpus);
  else if (local.is_gpu) sheet = match_local_device(db, local.name, local.multiprocessors, local.memory_bytes / 1e9);
  if (sheet) {
    datasheet["dram_gbps"] = sheet->memory_bandwidth_gbps;
    auto put = [&](const char* key, const std::map<std::string, double>& peaks, const char* dtype) {
      auto it = peaks.find(dtype);
      if (it != peaks.end()) datasheet[key] = it->second;
    };
    put("fp32_vector", sheet->vector_tflops, "fp32");
    put("fp16_vector", sheet->vector_tflops, "fp16");
    for (const char* d : {"tf32", "fp16", "bf16", "fp8"}) put(d, sheet->tensor_tflops, d);
    if (auto it = sheet->vector_tflops.find("fp32"); it != sheet->vector_tflops.end()) datasheet["fp32"] = it->second;
    out << "datasheet: " << sheet->id << " (" << sheet->name << ")\n";
  }
  out << format_calibration(result, datasheet);
  const std::string id = (sheet ? sheet->id : std::string(local.is_gpu ? "local-gpu" : "local-cpu")) + "-calibrated";
  const std::string toml = calibration_to_hwdb_toml(result, id);
  if (!options.calibrate_kernels_csv.empty()) {
    write_report_file(options.calibrate_kernels_csv, library_kernels_csv(result));
    out << "library kernel grid written to " << options.calibrate_kernels_csv << "\n";
  }
  if (!options.calibrate_out.empty()) {
    write_report_file(options.calibrate_out, toml);
    out << "hwdb entry written to " << options.calibrate_out << " (use it with --hwdb DIR)\n";
  } else {
    out << "\n" << toml;
  }
  return kExitOk;
}

}  // namespace

Json analysis_report(const CliOptions& options, std::ostream& err) {
  if (options.model_path.empty()) throw Error(kExitUsage, "no model file given");
  RunSetup setup = set_up(options);
  const std::unique_ptr<AnalysedModel> run = analyse(options, options.model_path, setup, err);
  return report_json(*run->report);
}

// One line. Messages that already name their subject keep it: a file the user gave (model,
// report, hwdb directory) or a device option ("--gpu: ..."), which is about the hardware, not the
// model. The others get the model's path.
std::string one_line_error(const CliOptions& options, std::string message) {
  for (char& ch : message)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::vector<std::string> files = {options.model_path, options.csv_path, options.json_path, options.roofline_svg,
                                    options.html_path, options.calibrate_out, options.calibrate_kernels_csv,
                                    options.calibrate_from_grid};
  files.insert(files.end(), options.hwdb_dirs.begin(), options.hwdb_dirs.end());
  bool named = false;
  for (const char* option : {"--gpu", "--hwdb", "--peak-tflops", "--bandwidth-gbps"})
    named = named || message.rfind(option, 0) == 0;
  for (const auto& file : files) named = named || starts_with_file(message, file);
  if (!named && !options.model_path.empty()) message = options.model_path + ": " + message;
  return message;
}

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"modelcost: per-layer MACs, FLOPs, params and memory traffic of an ONNX model", "modelcost"};
  app.set_version_flag("--version", [] { return version_text(); });
  CliOptions options;
  add_cli_options(app, options);
  LlmCommandOptions llm;
  add_llm_command(app, llm);
  ServeCommandOptions serve;
  add_serve_command(app, serve);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    // CLI11 may not have stored the positional yet; name the file when it was given.
    const auto& given = app.get_option("model")->results();
    CliOptions named;
    if (!given.empty()) named.model_path = given.front();
    const std::string hint = suggest_option(app, app.remaining());
    print_error(err, named, std::string(e.what()) + (hint.empty() ? " (see modelcost --help)" : " (" + hint + ")"));
    return kExitUsage;
  }
  try {
    if (options.list_gpus) return list_gpus(options, out);
    if (options.calibrate) return calibrate(options, out);
    if (options.diff) return diff_models(options, out, err);
    if (llm.requested) {
      options.model_path = llm.model_path;  // errors name the model
      return run_llm_command(llm, out);
    }
    if (serve.requested) {
      options.model_path = serve.model_path;  // errors name the model
      return run_serve_command(serve, out);
    }
    return analyse_and_report(options, out, err);
  } catch (const Error& e) {
    print_error(err, options, e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    print_error(err, options, "out of memory");
    return kExitRuntime;
  } catch (const std::exception& e) {
    // Not expected from any stage; still one line and a code below 126, never a crash.
    print_error(err, options, std::string("internal error: ") + e.what());
    return kExitRuntime;
  }
}

namespace {

// argv for CLI11: the program name, then `args`; the pointers live as long as `args`.
std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  return argv;
}

}  // namespace

int run_app(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> with_name = {"modelcost"};
  with_name.insert(with_name.end(), args.begin(), args.end());
  std::vector<char*> argv = argv_of(with_name);
  return run_app(static_cast<int>(argv.size()), argv.data(), out, err);
}

CliOptions parse_analysis_options(const std::vector<std::string>& args) {
  CLI::App app{"modelcost", "modelcost"};
  CliOptions options;
  add_cli_options(app, options);
  std::vector<std::string> with_name = {"modelcost"};
  with_name.insert(with_name.end(), args.begin(), args.end());
  std::vector<char*> argv = argv_of(with_name);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw Error(kExitUsage, e.what());
  }
  return options;
}

}  // namespace modelcost
