// One pass over nodes of a graph on the GPU, as the whole-model replay runs them: a device
// buffer per tensor (reshape-like nodes alias their input; graph inputs and weights random,
// known values uploaded), every node's runner prepared up front; launch() enqueues them in order,
// so a pass can be captured into a CUDA graph. The model runner runs the top-level graph as one
// pass, an If's branch runner its branch as another.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/runner.h"

namespace modelcost::cuda {

class GraphPass {
 public:
  // Places `nodes` (of one graph, in topological order) and prepares their runners. pointer:
  // the device pointer of each tensor id of that graph, null where not placed yet (the pass
  // allocates it). Returns "" or why a node cannot run ("node 'x': reason").
  std::string prepare(const std::vector<NodeAnalysis>& nodes, std::vector<void*>& pointer, CudaContext& context);
  void launch(cudaStream_t stream);
  size_t runner_count() const { return runners_.size(); }

 private:
  void* allocate(const TensorSpec& spec);
  void place_zero_cost_outputs(const NodeSpec& spec, const std::vector<DeviceTensor>& in, std::vector<void*>& pointer,
                               CudaContext& context);

  std::vector<DeviceBuffer> owned_;
  std::vector<std::unique_ptr<OperatorRunner>> runners_;
};

}  // namespace modelcost::cuda
