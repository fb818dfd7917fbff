// Helpers shared by the control-flow rule files (If/Loop/Scan and SequenceMap): finding a node's
// body graphs, binding their inputs and outer-scope tensors, and running the shape engine on them.
#pragma once
#include "ops/defs/fused_helpers.h"

namespace modelcost {

// Index in Node::subgraphs of the graph attribute `attribute`; fails naming the node when absent.
int subgraph_index(const OpContext& c, const char* attribute);
Graph& subgraph(const OpContext& c, const char* attribute);
// Checks the body's input and output counts, forgets what an earlier pass inferred, and copies
// the outer-scope tensors the body reads (shape, value, initializer) from the enclosing graph.
void prepare_body(const OpContext& c, Graph& body, size_t expected_inputs, size_t expected_outputs);
// Sets body input i (an element of Graph::inputs).
void bind_body_input(Graph& body, size_t i, int32_t dtype, Shape shape, bool estimate);
// Runs the shape engine over the body (NotInferable when there is no engine, e.g. in a cost rule).
void infer_body(const OpContext& c, Graph& body);
const TensorInfo& body_output(const Graph& body, size_t i);
bool body_outputs_shaped(const Graph& body);

}  // namespace modelcost
