#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <new>
#include <sstream>

#include "cli/options.h"
#include "cli/report_files.h"
#include "cli/version.h"
#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "ops/op_registry.h"
#include "report/csv_writer.h"
#include "report/json_writer.h"
#include "report/report.h"
#include "report/table_printer.h"
#include "shapes/shape_engine.h"

namespace modelcost {
namespace {

bool starts_with_file(const std::string& message, const std::string& file) {
  return !file.empty() && message.compare(0, file.size() + 1, file + ":") == 0;
}

// `modelcost: error: <file>: <what>` on one line. Messages from the stages that already name a
// file the user gave keep it; the others get the model's path.
void print_error(std::ostream& err, const CliOptions& options, std::string message) {
  for (char& ch : message)
    if (ch == '\n' || ch == '\r') ch = ' ';
  const bool named = starts_with_file(message, options.model_path) || starts_with_file(message, options.csv_path) ||
                     starts_with_file(message, options.json_path);
  if (!named && !options.model_path.empty()) message = options.model_path + ": " + message;
  err << "modelcost: error: " << message << std::endl;
}

std::string render(const std::function<void(std::ostream&)>& printer) {
  std::ostringstream text;
  printer(text);
  return text.str();
}

int analyse_and_report(const CliOptions& options, std::ostream& out) {
  const ShapeOptions shape_options = shape_options_from(options);
  check_report_paths(options);

  Model model = load_model(options.model_path);
  Diagnostics diagnostics;
  ShapeEngine engine(OpRegistry::instance(), diagnostics);
  engine.run(model, shape_options);
  const Analysis analysis = compute_costs(model, OpRegistry::instance(), diagnostics);
  const Report report = build_report(analysis, kModelcostVersion);

  if (!options.csv_path.empty())
    write_report_file(options.csv_path, render([&](std::ostream& s) { write_csv(report, s); }));
  if (!options.json_path.empty())
    write_report_file(options.json_path, render([&](std::ostream& s) { write_json(report, s); }));
  if (!options.quiet) {
    TableOptions table;
    table.top = static_cast<size_t>(options.top);
    table.all_op_types = options.by_op;
    print_table(report, table, out);
  }
  return kExitOk;
}

}  // namespace

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"modelcost: per-layer MACs, FLOPs, params and memory traffic of an ONNX model", "modelcost"};
  app.set_version_flag("--version", std::string("modelcost ") + kModelcostVersion);
  CliOptions options;
  add_cli_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    // CLI11 may not have stored the positional yet; name the file when it was given.
    const auto& given = app.get_option("model")->results();
    CliOptions named;
    if (!given.empty()) named.model_path = given.front();
    print_error(err, named, std::string(e.what()) + " (see modelcost --help)");
    return kExitUsage;
  }
  try {
    return analyse_and_report(options, out);
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

}  // namespace modelcost
