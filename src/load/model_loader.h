// Stage 1: reads an ONNX file into a Model without ever touching external weight data.
#pragma once
#include <string>

#include "modelcost/graph.h"

namespace modelcost {

// Protobuf nesting read from a file (protobuf's default is 100, about 32 levels of nested
// If/Loop/Scan bodies: each level is a node, an attribute and a graph).
constexpr int kMaxProtobufNesting = 1000;

// Throws Error (kExitUnreadable / kExitInvalidModel / kExitUnsupported) with a message that
// names the file.
Model load_model(const std::string& path);
// Same, from bytes already in memory (tests, generated graphs); `label` names the source.
Model load_model_from_bytes(const std::string& bytes, const std::string& label);

}  // namespace modelcost
