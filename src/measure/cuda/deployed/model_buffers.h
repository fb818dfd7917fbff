// Device buffers for every tensor of a model, for the deployed view's run of its fusion groups:
// graph inputs and weights get random (or known) contents, reshape-like nodes alias their
// input, and each node's spec and plan are decoded once for the runners that need them. Tensors
// named together in `adjacent` (the results of one batched call) share one buffer, in order; a
// `held` tensor lives inside another's buffer (the fusion plan's in_place groups: a view into its
// input, or a Concat's input in its place in the output).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/runner.h"
#include "modelcost/analysis.h"
#include "modelcost/fusion.h"

namespace modelcost::cuda {

struct PlannedNode {
  NodeSpec spec;
  OpPlan plan;
};

class ModelBuffers {
 public:
  // Throws Error when a node has no concrete shapes.
  ModelBuffers(const Analysis& analysis, const std::string& dtype, cudaStream_t stream,
               const std::vector<std::vector<int>>& adjacent = {}, const std::vector<HeldWithin>& held = {});
  void* data(int tensor) const { return tensor >= 0 ? pointer_[tensor] : nullptr; }
  const PlannedNode& planned(size_t node) const { return *planned_[node]; }
  // The node's inputs and outputs as the operator runners take them.
  std::vector<DeviceTensor> inputs(size_t node) const;
  std::vector<DeviceTensor> outputs(size_t node) const;

 private:
  void allocate(int tensor, const TensorSpec& spec);
  // Gives an output its buffer: inside the tensor holding it, in its adjacent set, or its own.
  void place(int tensor);
  // Places `tensor` at its slot of its adjacent set's buffer (allocated on the set's first
  // tensor); false where it belongs to no set.
  bool place_adjacent(int tensor, const TensorSpec& spec);
  const Analysis& analysis_;
  std::vector<DeviceBuffer> owned_;
  std::vector<void*> pointer_;
  std::vector<std::optional<PlannedNode>> planned_;
  struct Slot {
    size_t set = 0, index = 0;
  };
  std::map<int, Slot> slot_;
  std::vector<std::vector<int>> adjacent_;
  std::vector<char*> set_base_;
  std::map<int, HeldWithin> held_;
  std::vector<const TensorSpec*> spec_of_;  // each node output's spec, by tensor
};

// The plan's placements: each sibling_products group's results side by side (the `adjacent` sets),
// and the in_place groups' held tensors.
std::vector<std::vector<int>> adjacent_outputs(const Analysis& analysis, const FusionPlan& plan);
std::vector<HeldWithin> held_tensors(const Analysis& analysis, const FusionPlan& plan);

}  // namespace modelcost::cuda
