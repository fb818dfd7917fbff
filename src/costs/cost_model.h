// Stage 3: runs each node's cost rule over the shaped graph and totals the results.
#pragma once
#include "modelcost/analysis.h"
#include "modelcost/diagnostics.h"

namespace modelcost {

class OpRegistry;

Analysis compute_costs(const Model& model, const OpRegistry& registry, Diagnostics& diagnostics);

}  // namespace modelcost
