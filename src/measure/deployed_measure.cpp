// The deployed view's measurement where the backend has none (the CPU reference backend): the
// fused kernels it times exist on the GPU only.
#include "modelcost/measure.h"

namespace modelcost {

DeployedMeasurement Backend::measure_deployed(const Analysis&, const FusionPlan&, const MeasureOptions&) {
  DeployedMeasurement m;
  m.reason = "the deployed view is measured on an NVIDIA GPU only (fused kernels); --cpu measures as written";
  return m;
}

}  // namespace modelcost
