// How large a model the analysis takes on. Each node and each tensor costs about 1-2 KB across
// the stages (the loaded protobuf, the graph, its shaped copy, the costs and reports), so these
// keep a run under 1 GB of memory and a few seconds, while the largest real exports (LLMs of
// 100+ layers) have tens of thousands of nodes.
#pragma once
#include <cstdint>

namespace modelcost {

// Nodes of the model, If/Loop/Scan bodies and expanded local functions included.
constexpr int64_t kMaxModelNodes = 300000;
// Tensor names: graph inputs, initializers and node outputs, bodies included.
constexpr int64_t kMaxModelTensors = 600000;

}  // namespace modelcost
