// --by-module DEPTH: per-node figures summed per scope of the node names, as fvcore groups costs by
// module. "/layer1/0/conv1/Conv" is in scope "/layer1/0/conv1"; at depth 2 it counts under "/layer1/0".
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "report/aggregate.h"
#include "report/report.h"

namespace modelcost {

// The node's scope path: the module PyTorch's dynamo exporter recorded for it (torch_scope.h), else
// its name without the last '/' component ("/layer1/0/conv1/Conv" -> "/layer1/0/conv1"); "" for a
// name without scopes ("Conv_0").
std::string node_scope(const Node& node);
// The first `depth` components of a scope: ("/layer1/0/conv1", 2) -> "/layer1/0"; "" stays "".
std::string scope_at_depth(const std::string& scope, size_t depth);

struct ModuleRow : SummedRow {
  std::string module;  // "/layer1/0"; "" for nodes outside any scope
};

struct ModuleSummary : SummedColumns {
  size_t depth = 0;
  std::vector<ModuleRow> rows;  // in the order each module first appears in the graph
};

ModuleSummary summarize_by_module(const Report& report, size_t depth);

// Adds the "module" column (CSV, JSON) and the "by_module" section (terminal table, JSON array).
void add_module_summary(Report& report, size_t depth);

}  // namespace modelcost
