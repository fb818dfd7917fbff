// The deployed view's and the LLM serving step's measurements where the backend has none (the CPU
// reference backend): the fused kernels they time exist on the GPU only.
#include "modelcost/measure.h"

namespace modelcost {

DeployedMeasurement Backend::measure_deployed(const Analysis&, const FusionPlan&, const MeasureOptions&) {
  DeployedMeasurement m;
  m.reason = "the deployed view is measured on an NVIDIA GPU only (fused kernels); --cpu measures as written";
  return m;
}

ServingStepTiming Backend::measure_serving_step(const ServingStepSpec&) {
  ServingStepTiming t;
  t.reason = "the deployed serving step is measured on an NVIDIA GPU only";
  return t;
}

}  // namespace modelcost
