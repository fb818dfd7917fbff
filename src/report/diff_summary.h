// The whole-model figures `modelcost diff` compares beside the per-node sums: predicted latency in
// each view (as written, deployed) on every device, and the capacity plan's latency and throughput
// at every batch of --batch on every device.
#pragma once
#include <string>
#include <vector>

#include "report/report.h"

namespace modelcost {

struct WholeModelFigure {
  std::string name;   // "predicted_latency_deployed_ms", "plan_latency_ms@h100-sxm@32", ...
  std::string title;  // "predicted latency deployed (ms)", "latency at batch 32 on h100-sxm (ms)"
  ColumnKind kind = ColumnKind::kTime;
  double a = 0, b = 0;
};

// The figures both reports have, in report order (the view the run asked for first).
std::vector<WholeModelFigure> whole_model_figures(const Report& a, const Report& b);

// "deployed" or "as-written" when the reports have a device, "" otherwise.
std::string report_view(const Report& report);

}  // namespace modelcost
