// Stage 3: runs each node's cost rule over the shaped graph and totals the results.
#pragma once
#include <memory>
#include <string>

#include "modelcost/analysis.h"
#include "modelcost/diagnostics.h"

namespace modelcost {

class OpRegistry;

// Costs of every node of `shaped` (the model's graph as shape inference left it; analyze() makes it).
Analysis compute_costs(const Model& model, std::shared_ptr<const Graph> shaped, const OpRegistry& registry,
                       Diagnostics& diagnostics);

// "N of M nodes (P%) are left without a concrete shape ... (unknown ops: ...)": the share of
// the model whose cost is missing and the ops without a rule that likely caused it.
std::string describe_unshaped(const Analysis& analysis, const OpRegistry& registry);

}  // namespace modelcost
