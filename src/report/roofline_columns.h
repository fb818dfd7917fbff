// Adds the roofline and the capacity plan to a report: per-node bound, predicted time and
// share; the predicted-latency total; "hardware", "plan" and "comparison" sections.
#pragma once
#include <vector>

#include "modelcost/plan.h"
#include "modelcost/roofline.h"
#include "report/report.h"

namespace modelcost {

// The report keeps a copy of `roofline`. `resolution` is describe_resolution()'s line ("" for an id).
// With --dtype: bytes, intensity and output dtypes as if every float tensor had that type (also
// without a device: sizes need none).
void show_figures_at_dtype(Report& report, const std::string& recast_dtype);
void add_roofline(Report& report, const RooflineReport& roofline, const std::string& resolution);
// The plan on every device: JSON "plan" is the first device's, "plans" every device's (several only).
void add_plan(Report& report, const std::vector<CapacityPlan>& plans);
// --gpu a,b,c: per-node bound and predicted time on every device after the first (columns
// "bound@<id>", "predicted_us@<id>") and predicted-latency totals per device, as written and deployed.
void add_device_columns(Report& report, const std::vector<const RooflineReport*>& others);
// The rows' latencies are in `view` ("deployed" or "as-written"), which the table's title names.
void add_device_comparison(Report& report, const std::vector<DeviceComparisonRow>& rows, const std::string& dtype,
                           const std::string& view);

}  // namespace modelcost
