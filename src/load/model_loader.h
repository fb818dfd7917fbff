// Stage 1: reads an ONNX file into a Model without ever touching external weight data.
#pragma once
#include <string>

#include "modelcost/graph.h"

namespace modelcost {

// Throws Error (kExitUnreadable / kExitInvalidModel / kExitUnsupported) with a message that
// names the file.
Model load_model(const std::string& path);
// Same, from bytes already in memory (tests, generated graphs); `label` names the source.
Model load_model_from_bytes(const std::string& bytes, const std::string& label);

}  // namespace modelcost
