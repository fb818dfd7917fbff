// The hardware part of a run (--gpu, --dtype, --batch, --roofline-svg ...): picks the devices,
// computes the roofline and the capacity plan, and adds them to the report (which keeps copies).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "cli/options.h"
#include "modelcost/hardware.h"
#include "modelcost/plan.h"
#include "modelcost/roofline.h"
#include "report/report.h"
#include "report/roofline_svg.h"
#include "shapes/batch_dim.h"

namespace modelcost {

class HardwareStage {
 public:
  // True when the options ask for anything hardware-related.
  static bool requested(const CliOptions& options);
  // Throws Error(kExitUsage) for options that need --gpu (or a custom device) without one.
  static void check_options(const CliOptions& options);

  // `local_gpu_name` etc. resolve `--gpu auto` (empty when no GPU is known).
  HardwareStage(const CliOptions& options, const std::string& local_gpu_name = "", int local_sm_count = 0,
                double local_memory_gb = 0);

  void run(const Model& model, const ShapeOptions& shape_options, const Analysis& analysis, Report& report);
  // The roofline plot (one panel per device), after any measurement so the plot can show the
  // measured places too.
  std::string svg(const Analysis& analysis, const std::vector<MeasuredPoint>& measured) const;

  const Device& device() const { return *devices_.front(); }
  const RooflineReport* roofline() const { return roofline_.get(); }
  // One roofline per --gpu device, the first being roofline().
  const std::vector<std::unique_ptr<RooflineReport>>& rooflines() const { return rooflines_; }
  const std::vector<CapacityPlan>& plans() const { return plans_; }

 private:
  const CliOptions& options_;
  HardwareDb db_;
  std::unique_ptr<Device> custom_;
  std::vector<const Device*> devices_;
  std::string resolution_;
  std::unique_ptr<RooflineReport> roofline_;
  std::vector<std::unique_ptr<RooflineReport>> rooflines_;  // [0] is a copy of *roofline_
  std::vector<CapacityPlan> plans_;
  std::vector<std::optional<double>> prices_;  // --price-per-hour, per device

  void plan(const Model& model, const ShapeOptions& shape_options, const BatchDim& batch_dim, Report& report);
};

}  // namespace modelcost
