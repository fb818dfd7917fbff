// The module path PyTorch's dynamo exporter records on each node (metadata
// "pkg.torch.onnx.name_scopes": "['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']"), as a
// scope path "/layer1/0/conv1". Its node names carry no scopes, so --by-module reads this instead.
#pragma once
#include <optional>
#include <string>

#include "modelcost/graph.h"

namespace modelcost {

// The innermost module of the node's name_scopes metadata as "/a/b/c" ("" for the top-level
// module); nullopt when the node has no such metadata.
std::optional<std::string> torch_module_scope(const Node& node);

// The scope path of a name_scopes value; the last entry is the node itself, not a module.
std::string scope_of_name_scopes(const std::string& value);

}  // namespace modelcost
