#include "timing/captured_graph.h"

#include <vector>

#include "core/cuda_check.h"

namespace modelcost::cuda {

CapturedGraph::CapturedGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream) {
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(stream);
  } catch (...) {  // leave the stream out of capture mode for whoever uses it next
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream, &broken);
    if (broken) cudaGraphDestroy(broken);
    throw;
  }
  MC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  MC_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

CapturedGraph::~CapturedGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CapturedGraph::launch(cudaStream_t stream) const { MC_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

size_t CapturedGraph::non_kernel_nodes() const { return count_graph_nodes(graph_).other; }

GraphNodeCounts count_graph_nodes(cudaGraph_t graph) {
  size_t count = 0;
  MC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  MC_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  GraphNodeCounts counts;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    MC_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    counts.kernels += type == cudaGraphNodeTypeKernel;
    counts.other += type != cudaGraphNodeTypeKernel && type != cudaGraphNodeTypeEmpty;
  }
  return counts;
}

}  // namespace modelcost::cuda
