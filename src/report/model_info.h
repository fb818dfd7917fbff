// Facts about the model itself that the terminal header and the JSON "model" section share.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "modelcost/analysis.h"

namespace modelcost {

struct InputSummary {
  std::string name;
  std::string dtype;                  // "float32"; "" when the input is not a tensor
  std::vector<std::string> declared;  // dims as the file writes them: "batch", "3", "?" (no value)
  Shape shape;                        // the shape the analysis used (after --dim / --input)
  bool has_shape = false;
};

// The graph inputs as declared and as the analysis shaped them.
std::vector<InputSummary> summarize_inputs(const Analysis& analysis);
// Imported opsets sorted by domain, the standard domain spelled "ai.onnx".
std::vector<std::pair<std::string, int>> sorted_opsets(const Model& model);
// "1x3x224x224": the --input syntax; "scalar" for rank 0.
std::string shape_dims_text(const Shape& shape);

}  // namespace modelcost
