// Adds the roofline and the capacity plan to a report: per-node bound, predicted time and
// share; the predicted-latency total; "hardware", "plan" and "comparison" sections.
#pragma once
#include <vector>

#include "modelcost/plan.h"
#include "modelcost/roofline.h"
#include "report/report.h"

namespace modelcost {

// The report keeps a copy of `roofline`. `resolution` is describe_resolution()'s line ("" for an id).
void add_roofline(Report& report, const RooflineReport& roofline, const std::string& resolution);
// The plan on every device: JSON "plan" is the first device's, "plans" every device's (several only).
void add_plan(Report& report, const std::vector<CapacityPlan>& plans);
// --gpu a,b,c: per-node bound and predicted time on every device after the first (columns
// "bound@<id>", "predicted_us@<id>") and a predicted-latency total per device.
void add_device_columns(Report& report, const std::vector<const RooflineReport*>& others);
void add_device_comparison(Report& report, const std::vector<DeviceComparisonRow>& rows, const std::string& dtype);

}  // namespace modelcost
