// Checks of --dim and --input against the model's declared inputs, before any analysis: a dim
// name no input has, or an --input shape of the wrong rank, is a usage error that names what the
// model has, never a warning or a failure blamed on some node later.
#pragma once
#include "modelcost/graph.h"
#include "shapes/shape_engine.h"

namespace modelcost {

// Throws Error(kExitUsage): "--dim foo=3: the model's inputs have no dim named 'foo' (symbolic dims: batch, seq)",
// "--input input=1x3x224: 'input' has 4 dims ([batch,3,224,224]), got 3".
void check_shape_options(const Model& model, const ShapeOptions& options);

}  // namespace modelcost
