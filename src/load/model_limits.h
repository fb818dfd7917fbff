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
// Bytes of the names the nodes carry (node, input and output names), bodies and expanded
// functions included: every stage copies them, so they are bounded with the counts above.
constexpr int64_t kMaxModelNameBytes = int64_t{128} << 20;
// Local functions calling local functions: the deepest chain expanded (as deep as If/Loop/Scan).
constexpr int kMaxFunctionNesting = 128;
// Serialized bytes the expanded function bodies add (copies of nodes, their attributes and the
// scoped names): a 100 KB name or a large Constant in a body called many times stops here.
constexpr int64_t kMaxExpandedFunctionBytes = int64_t{256} << 20;
// A call's name, and each inner name, as written into inlined names: longer ones are cut and
// made unique with the call-site id; a scope longer than kMaxScopeBytes becomes the id alone.
constexpr size_t kMaxInlinedNameBytes = 64;
constexpr size_t kMaxScopeBytes = 256;

}  // namespace modelcost
