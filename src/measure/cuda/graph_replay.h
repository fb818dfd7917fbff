// One pass of enqueued work captured into a CUDA graph, and its replays timed the way a
// deployment replays a captured graph. The as-written (nodes) and deployed (groups) whole-model
// runs share it.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "measure/cuda/l2_flush.h"
#include "modelcost/measure.h"

namespace modelcost::cuda {

class CapturedGraph {
 public:
  // Captures what `enqueue` launches on `stream` (thread-local capture) and instantiates it;
  // throws Error, leaving no capture open.
  CapturedGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(cudaStream_t stream) const;
  // Nodes of the graph that are not kernels (memsets, copies, host nodes, events): each one is a
  // step the replay waits on between kernels.
  size_t non_kernel_nodes() const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Three warm-up replays, then replays timed with CUDA events (an L2 flush before each where
// options.cold and `flush` is given) until at least 20 samples meet options' stopping rule; the
// result's kernel breakdown (kernels per replay, busy time, span) comes from CUPTI where it runs.
ModelMeasurement time_graph_replays(const CapturedGraph& graph, cudaStream_t stream, const MeasureOptions& options,
                                    L2Flush* flush);

}  // namespace modelcost::cuda
