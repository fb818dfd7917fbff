// Adds measured per-node times to a report: measured_us, achieved TFLOP/s and GB/s,
// efficiency against the roofline, kernel names; and the whole-model "measurement" section.
#pragma once
#include <vector>

#include "modelcost/measure.h"
#include "modelcost/roofline.h"
#include "report/report.h"

namespace modelcost {

// `nodes` is parallel to Analysis::nodes; `roofline` may be null. The report keeps copies.
void add_measurements(Report& report, const std::vector<NodeMeasurement>& nodes, const ModelMeasurement& model,
                      const DeviceInfo& device, const RooflineReport* roofline);

// --counters: columns dram_bytes, executed_flops, measured_intensity (files) and a "counters"
// section whose warning line ("counters unavailable: <reason>") says why nodes have none.
// Call after add_measurements (the columns follow "implementation").
void add_counter_columns(Report& report, const std::vector<NodeMeasurement>& nodes);
// The warning line for the nodes' counters, "" when every measured node has them.
std::string counters_warning(const std::vector<NodeMeasurement>& nodes);

}  // namespace modelcost
