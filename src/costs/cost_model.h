// Stage 3: runs each node's cost rule over the shaped graph and totals the results.
#pragma once
#include <string>

#include "modelcost/analysis.h"
#include "modelcost/diagnostics.h"

namespace modelcost {

class OpRegistry;

Analysis compute_costs(const Model& model, const OpRegistry& registry, Diagnostics& diagnostics);

// "N of M nodes (P%) are left without a concrete shape ... (unknown ops: ...)": the share of
// the model whose cost is missing and the ops without a rule that likely caused it.
std::string describe_unshaped(const Analysis& analysis, const OpRegistry& registry);

}  // namespace modelcost
