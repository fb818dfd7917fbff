// One pass of enqueued work captured into an instantiated CUDA graph: what the whole-model
// replays (graph_replay.h) and calibrate's per-launch graph times (calibrate_graph.h) replay.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

namespace modelcost::cuda {

// A graph's nodes by kind: kernels, and the others less empty nodes (memset, copy, host, event...).
struct GraphNodeCounts {
  size_t kernels = 0, other = 0;
};
GraphNodeCounts count_graph_nodes(cudaGraph_t graph);

class CapturedGraph {
 public:
  // Captures what `enqueue` launches on `stream` (thread-local capture mode) and instantiates it.
  // On a throw inside `enqueue` the stream leaves capture mode and the error propagates.
  CapturedGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void launch(cudaStream_t stream) const;
  // Memset, copy, host, event and other nodes that are not kernels (empty nodes excluded).
  size_t non_kernel_nodes() const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace modelcost::cuda
