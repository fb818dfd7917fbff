// The deployed view in the reports: each node's group id, the per-group table (JSON section
// "groups", --groups-csv, the terminal's heaviest kernels) and the deployed totals.
#pragma once
#include <ostream>

#include "modelcost/measure.h"
#include "modelcost/roofline.h"
#include "report/report.h"

namespace modelcost {

// `roofline` (with its fusion plan) must outlive the report.
void add_groups(Report& report, const RooflineReport& roofline);
// One row per group: id, pattern, label, members, FLOPs, bytes, intensity, bound, predicted time;
// with `measured` (the deployed view measured), also measured_us, runner and fell_back.
void write_groups_csv(const Analysis& analysis, const RooflineReport& roofline, std::ostream& out,
                      const DeployedMeasurement* measured = nullptr);

}  // namespace modelcost
