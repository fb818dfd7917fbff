// Builds the graph IR from the protobuf: tensor table, topological order, nested subgraphs.
#pragma once
#include <string>
#include <unordered_map>

#include "modelcost/graph.h"

namespace modelcost {

// Nesting of If/Loop/Scan bodies the analysis follows (each level is a recursion of the
// builder and of shape inference).
constexpr int kMaxSubgraphDepth = 128;

// Fails (Error, kExitInvalidModel) on a cycle, an input no node produces, a duplicate output.
Graph build_graph(const onnx::GraphProto& proto, const std::unordered_map<std::string, int>& opsets);

}  // namespace modelcost
