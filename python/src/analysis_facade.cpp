#include "analysis_facade.h"

#include <iostream>
#include <new>

#include "cli/app.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "modelcost/hardware.h"
#include "shapes/batch_dim.h"

namespace modelcost {
namespace {

CliOptions cli_options(const PythonRequest& request) {
  CliOptions options = parse_analysis_options(request.args);
  if (builtin_hwdb_dir().empty() && !request.package_hwdb_dir.empty())
    options.hwdb_dirs.insert(options.hwdb_dirs.begin(), request.package_hwdb_dir);
  return options;
}

// With a device and no batch list or target, the plan covers the model's own batch (when it has a
// batch dim), so a Result always has a plan to show.
void plan_at_own_batch(CliOptions& options, const Model& model, const ShapeOptions& shape_options) {
  if (options.gpus.empty() || !options.batches.empty() || options.target_qps || options.latency_slo_ms) return;
  try {
    options.batches = std::to_string(find_batch_dim(model, shape_options, "").current);
  } catch (const Error&) {  // no batch dim: roofline only
  }
}

}  // namespace

Json analyse_for_python(const PythonRequest& request) {
  CliOptions options;
  try {
    options = cli_options(request);
    if (options.model_path.empty()) throw Error(kExitUsage, "no model file given");
    plan_at_own_batch(options, load_model(options.model_path), shape_options_from(options));
    if (options.list_gpus || options.calibrate || options.diff)
      throw Error(kExitUsage, "internal: analyse_for_python runs the analysis only");
    return analysis_report(options, std::cerr);
  } catch (const Error& e) {
    throw Error(e.code(), one_line_error(options, e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(kExitRuntime, one_line_error(options, "out of memory"));
  } catch (const std::exception& e) {
    throw Error(kExitRuntime, one_line_error(options, std::string("internal error: ") + e.what()));
  }
}

}  // namespace modelcost
