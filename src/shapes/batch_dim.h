// Finding and setting a model's batch dimension, for the capacity plan's batch sweep.
#pragma once
#include <string>

#include "shapes/shape_engine.h"

namespace modelcost {

struct BatchDim {
  std::string symbol;   // the symbolic dim's name ("batch"), or "" for a model exported with a fixed batch
  int64_t current = 1;  // its value under the given options (1 when unset)
};

// The batch dim: `named` when given (--batch-dim), else the first graph input's first dim.
// Throws Error(kExitUsage) when `named` is no symbolic dim of the inputs, or the model has no input.
BatchDim find_batch_dim(const Model& model, const ShapeOptions& options, const std::string& named);

// `options` with the batch dim set to `batch`: the symbol's value, or, for a fixed-batch export,
// the first dim of every input whose first dim equals the first input's (--input overrides stay).
ShapeOptions with_batch(const Model& model, ShapeOptions options, const BatchDim& dim, int64_t batch);

}  // namespace modelcost
