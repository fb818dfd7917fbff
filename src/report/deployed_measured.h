// The deployed view measured (--measure with --view deployed): per-group measured time beside
// the per-group prediction (JSON section "deployed_measurement", the groups CSV's measured
// columns, the terminal's slowest groups) and the measured deployed latency in the totals.
#pragma once
#include <ostream>

#include "modelcost/measure.h"
#include "modelcost/roofline.h"
#include "report/report.h"

namespace modelcost {

// `roofline` may be null (no predictions to show beside); the report keeps copies.
void add_deployed_measurement(Report& report, const DeployedMeasurement& measured, const FusionPlan& plan,
                              const RooflineReport* roofline);

}  // namespace modelcost
