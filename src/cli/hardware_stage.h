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
  // --roofline-svg, after any measurement so the plot can show the measured places too.
  void write_svg(const Analysis& analysis, const std::vector<MeasuredPoint>& measured) const;

  const Device& device() const { return *devices_.front(); }
  const RooflineReport* roofline() const { return roofline_.get(); }

 private:
  const CliOptions& options_;
  HardwareDb db_;
  std::unique_ptr<Device> custom_;
  std::vector<const Device*> devices_;
  std::string resolution_;
  std::unique_ptr<RooflineReport> roofline_;
};

}  // namespace modelcost
