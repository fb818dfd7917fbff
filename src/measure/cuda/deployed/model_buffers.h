// Device buffers for every tensor of a model, for the deployed view's run of its fusion groups:
// graph inputs and weights get random (or known) contents, reshape-like nodes alias their
// input, and each node's spec and plan are decoded once for the runners that need them.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "core/runner.h"
#include "modelcost/analysis.h"

namespace modelcost::cuda {

struct PlannedNode {
  NodeSpec spec;
  OpPlan plan;
};

class ModelBuffers {
 public:
  // Throws Error when a node has no concrete shapes.
  ModelBuffers(const Analysis& analysis, const std::string& dtype, cudaStream_t stream);
  void* data(int tensor) const { return tensor >= 0 ? pointer_[tensor] : nullptr; }
  const PlannedNode& planned(size_t node) const { return *planned_[node]; }
  // The node's inputs and outputs as the operator runners take them.
  std::vector<DeviceTensor> inputs(size_t node) const;
  std::vector<DeviceTensor> outputs(size_t node) const;

 private:
  void allocate(int tensor, const TensorSpec& spec);
  const Analysis& analysis_;
  std::vector<DeviceBuffer> owned_;
  std::vector<void*> pointer_;
  std::vector<std::optional<PlannedNode>> planned_;
};

}  // namespace modelcost::cuda
