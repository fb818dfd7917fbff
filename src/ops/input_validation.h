// Checks a node against its op's declared signature before any shape rule (or ONNX's own
// inference) sees it: the number of inputs and outputs, and the element types of its inputs.
// Rules then index inputs and compare dtypes without guarding against malformed nodes.
#pragma once
#include "ops/op_registry.h"

namespace modelcost {

// Standard ops are checked against ONNX's schema: input and output counts and attribute types
// (errors), input element types (a warning: rules work on any). Up to the last opset the ONNX
// library knows, the schema is the node's own; past it, only what newer opsets keep (minimum
// counts, inputs of one type constraint agreeing). Other ops (contrib domains, standard ops newer
// than the library) are checked against the input and output counts their row in the op table
// declares. Throws NodeError naming the node.
void validate_node(const OpContext& c, const OpRule& rule);

}  // namespace modelcost
