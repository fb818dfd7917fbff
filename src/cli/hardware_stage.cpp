#include "cli/hardware_stage.h"

#include "modelcost/errors.h"
#include "ops/op_registry.h"
#include "ops/user_rules.h"
#include "report/roofline_columns.h"
#include "report/roofline_svg.h"
#include "shapes/batch_dim.h"

namespace modelcost {

namespace {
constexpr double kRuntimeReserveBytes = 0.5e9;
}  // namespace

bool HardwareStage::requested(const CliOptions& o) {
  return !o.gpus.empty() || o.peak_tflops || o.bandwidth_gbps;
}

void HardwareStage::check_options(const CliOptions& o) {
  if (requested(o)) {
    if (o.gpus.empty() && !(o.peak_tflops && o.bandwidth_gbps))
      throw Error(kExitUsage, "a custom device needs both --peak-tflops and --bandwidth-gbps (or name one with --gpu)");
    check_dtype_option(o.dtype);
    return;
  }
  check_dtype_option(o.dtype);  // without a device --dtype re-sizes bytes and weights only
  const char* needs = !o.batches.empty() ? "--batch" : !o.roofline_svg.empty() ? "--roofline-svg"
                      : !o.groups_csv.empty() ? "--groups-csv"
                      : o.target_qps ? "--target-qps" : o.latency_slo_ms ? "--latency-slo-ms" : !o.prices.empty() ? "--price-per-hour" : nullptr;
  if (needs) throw Error(kExitUsage, std::string(needs) + " needs a device: --gpu NAME (see --list-gpus) or --peak-tflops with --bandwidth-gbps");
}

HardwareStage::HardwareStage(const CliOptions& options, const std::string& local_gpu_name, int local_sm_count,
                             double local_memory_gb)
    : options_(options) {
  if (options.gpus.empty()) {  // a custom device needs no database
    custom_ = std::make_unique<Device>(make_custom_device(*options.peak_tflops, *options.bandwidth_gbps));
    devices_.push_back(custom_.get());
    return;
  }
  db_ = load_hardware_db(options.hwdb_dirs);
  for (const auto& name : split_at(options.gpus, ',')) {
    if (name.empty()) throw Error(kExitUsage, "--gpu '" + options.gpus + "': empty device name");
    if (name == "auto") {
      const Device* local = local_gpu_name.empty() ? nullptr : match_local_device(db_, local_gpu_name, local_sm_count, local_memory_gb);
      if (!local)
        // No GPU is a device problem (exit 6, as for --measure); an unknown one is a usage error.
        throw Error(local_gpu_name.empty() ? kExitRuntime : kExitUsage,
                    local_gpu_name.empty() ? "--gpu auto: no local NVIDIA GPU found; name the device with --gpu NAME"
                                           : "--gpu auto: '" + local_gpu_name + "' matches no hwdb entry; add one with --hwdb (modelcost calibrate writes one)");
      resolution_ = "--gpu auto: this machine's " + local_gpu_name + " is " + local->id + " (" + local->name + ")";
      devices_.push_back(local);
      continue;
    }
    const Device& d = db_.resolve(name);
    if (devices_.empty()) resolution_ = describe_resolution(name, d);
    devices_.push_back(&d);
  }
  if (options.peak_tflops || options.bandwidth_gbps) {
    custom_ = std::make_unique<Device>(with_overrides(*devices_.front(), options.peak_tflops, options.bandwidth_gbps));
    devices_.front() = custom_.get();
  }
  prices_.assign(devices_.size(), std::nullopt);
  if (!options.prices.empty()) {
    const std::vector<double> prices = parse_positive_list("--price-per-hour", options.prices);
    if (prices.size() != devices_.size())
      throw Error(kExitUsage, "--price-per-hour '" + options.prices + "': one price per --gpu device (" +
                                  std::to_string(devices_.size()) + "), got " + std::to_string(prices.size()));
    for (size_t i = 0; i < prices.size(); ++i) prices_[i] = prices[i];
  }
}

void HardwareStage::run(const Model& model, const ShapeOptions& shape_options, const Analysis& analysis, Report& report) {
  const bool planning = !options_.batches.empty() || options_.target_qps || options_.latency_slo_ms;
  BatchDim batch_dim;
  bool have_batch_dim = false;
  try {
    batch_dim = find_batch_dim(model, shape_options, options_.batch_dim);
    have_batch_dim = true;
  } catch (const Error&) {
    if (planning || !options_.batch_dim.empty()) throw;
  }
  RooflineOptions ro;
  ro.dtype = options_.dtype;
  // A fixed first dim other than 1 may be no batch at all (an image's 3 channels): it is called a
  // batch only when it is symbolic, named by --batch-dim, or swept by --batch.
  const bool is_batch = have_batch_dim && (!batch_dim.symbol.empty() || batch_dim.current == 1 || planning ||
                                           !options_.batch_dim.empty());
  ro.batch = is_batch ? batch_dim.current : 0;
  ro.view = options_.view;
  ro.datasheet = options_.ceilings == "datasheet";
  ro.fusion = std::make_shared<const FusionPlan>(fuse(analysis));
  for (const Device* device : devices_)
    rooflines_.push_back(std::make_unique<RooflineReport>(compute_roofline(analysis, *device, ro)));
  roofline_ = std::make_unique<RooflineReport>(*rooflines_.front());
  add_roofline(report, *roofline_, resolution_);
  if (devices_.size() > 1) {
    std::vector<const RooflineReport*> others;
    for (size_t i = 1; i < rooflines_.size(); ++i) others.push_back(rooflines_[i].get());
    add_device_columns(report, others);
    auto rows = compare_devices(analysis, devices_, ro);
    for (size_t i = 0; i < rows.size(); ++i)
      if (prices_[i] && rows[i].throughput_per_s > 0) rows[i].cost_per_million_usd = *prices_[i] / 3600.0 / rows[i].throughput_per_s * 1e6;
    add_device_comparison(report, rows, roofline_->dtype, ro.view);
  }
  if (planning) plan(model, shape_options, batch_dim, report);
}

// The capacity plan on every device of --gpu, in the order given.
void HardwareStage::plan(const Model& model, const ShapeOptions& shape_options, const BatchDim& batch_dim, Report& report) {
  PlanOptions po;
  po.dtype = options_.dtype;
  po.view = options_.view;
  po.datasheet = options_.ceilings == "datasheet";
  po.batches = options_.batches.empty() ? std::vector<int64_t>{} : parse_batch_list(options_.batches);
  if (po.batches.empty() && !options_.target_qps && !options_.latency_slo_ms) po.batches = {batch_dim.current};
  // The CUDA context and library workspaces need room beside the model, as `llm` assumes too.
  po.workspace_bytes = kRuntimeReserveBytes;
  po.target_qps = options_.target_qps;
  po.latency_slo_ms = options_.latency_slo_ms;
  // The same loaded model at each batch; the main run already reported its warnings.
  const std::vector<std::string> op_rule_files = options_.op_rule_files;
  auto analyse_batch = [&model, &shape_options, &batch_dim, op_rule_files](int64_t batch) {
    try {
      AnalysisOptions batch_options = with_batch(model, shape_options, batch_dim, batch);
      batch_options.registry = &registry_with_user_rules(op_rule_files);
      return analyze(model, batch_options);
    } catch (const Error& e) {
      // Typically a fixed-batch export whose Reshape targets bake the batch size in.
      throw Error(kExitUsage, "--batch " + std::to_string(batch) + ": the model does not run at that batch" +
                                  (batch_dim.symbol.empty() ? " (the file fixes the first input's first dim: a fixed batch, "
                                                              "or no batch dim; re-export with a dynamic batch or name one with --batch-dim)"
                                                            : "") +
                                  ": " + e.what());
    }
  };
  for (size_t i = 0; i < devices_.size(); ++i) {
    po.price_per_hour_usd = prices_[i];
    CapacityPlan plan = plan_capacity(analyse_batch, *devices_[i], po);
    if (plan.dtype.empty()) plan.dtype = rooflines_[i]->dtype;  // the dtype the roofline used
    plans_.push_back(std::move(plan));
  }
  add_plan(report, plans_);
}

std::string HardwareStage::svg(const Analysis& analysis, const std::vector<MeasuredPoint>& measured) const {
  // Measured places belong to the device that measured: the first one.
  std::vector<RooflineSvgPanel> panels;
  for (size_t i = 0; i < rooflines_.size(); ++i) {
    RooflineSvgPanel panel{rooflines_[i].get(), {}};
    if (i == 0) panel.options.measured = measured;
    panels.push_back(std::move(panel));
  }
  return render_roofline_svg_panels(panels, analysis);
}

}  // namespace modelcost
