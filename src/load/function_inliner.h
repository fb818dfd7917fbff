// Expands calls of a model's local functions (ModelProto.functions) into their bodies before the
// graph is built, so each call is shaped and costed like any other nodes.
#pragma once
#include <string>
#include <unordered_map>

namespace onnx { class ModelProto; }

namespace modelcost {

struct Graph;

// Where an inlined node came from: the chain of call-node names ("encoder/layer0") and the
// innermost function ("domain.Name").
struct NodeScope {
  std::string scope;
  std::string function;
};

// Scope of each inlined top-level node, keyed by the name of its first output.
using InlinedScopes = std::unordered_map<std::string, NodeScope>;

// Replaces every call of a local function in the main graph (and in If/Loop/Scan bodies) by the
// function's nodes: formal inputs and outputs renamed to the call's, inner names prefixed with
// the call's scope ("<caller>/<call>", or a call-site id "call~N" past kMaxScopeBytes; names
// over kMaxInlinedNameBytes are cut), attribute references resolved from the call (or the
// function's defaults). Functions may call functions; recursion is refused (Error,
// kExitInvalidModel), and so are nesting past kMaxFunctionNesting, expanded bodies past
// kMaxExpandedFunctionBytes and an expansion past kMaxModelNodes nodes (functions calling
// functions several times each grow exponentially: 40 levels of two calls are 2^40 nodes). Domains the functions import are added
// to `opsets` when the model lacks them.
InlinedScopes inline_local_functions(onnx::ModelProto& model, std::unordered_map<std::string, int>& opsets);

// Sets Node::scope and Node::function of the top-level nodes named in `scopes`.
void assign_scopes(Graph& graph, const InlinedScopes& scopes);

}  // namespace modelcost
