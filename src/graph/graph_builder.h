// Builds the graph IR from the protobuf: tensor table, topological order, nested subgraphs.
#pragma once
#include <string>
#include <unordered_map>

#include "modelcost/graph.h"

namespace modelcost {

// Fails (Error, kExitInvalidModel) on a cycle, an input no node produces, a duplicate output.
Graph build_graph(const onnx::GraphProto& proto, const std::unordered_map<std::string, int>& opsets);

}  // namespace modelcost
