#include "measure/cuda/graph_replay.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/cupti_timer.h"
#include "measure/cuda/sampler.h"
#include "measure/sampling.h"
#include "measure/statistics.h"

namespace modelcost::cuda {
namespace {

class CapturedGraph {
 public:
  CapturedGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(cudaStream_t stream) const;
  size_t non_kernel_nodes() const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Kernel count, busy time and span of one replay, from CUPTI records of 11 more replays (their
// kernels carry the graph launch's external id); medians. Skipped without CUPTI.
void add_kernel_breakdown(ModelMeasurement& result, const CapturedGraph& graph, cudaStream_t stream) {
  CuptiTimer& timer = CuptiTimer::instance();
  if (!timer.ok()) return;
  timer.collect();
  std::vector<uint64_t> ids;
  for (int i = 0; i < 11; ++i) {
    ids.push_back(next_external_id());
    timer.push(ids.back());
    graph.launch(stream);
    timer.pop();
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  auto spans = timer.collect();
  std::vector<double> busy, span, count;
  for (uint64_t id : ids) {
    auto it = spans.find(id);
    if (it == spans.end()) return;
    busy.push_back(it->second.kernel_ns / 1e3);
    span.push_back((it->second.last_end - it->second.first_start) / 1e3);
    count.push_back(static_cast<double>(it->second.names.size()));
  }
  result.has_kernel_breakdown = true;
  result.kernel_busy_us = summarize(busy).median;
  result.kernel_span_us = summarize(span).median;
  result.kernels_per_run = static_cast<int>(summarize(count).median);
}

CapturedGraph::CapturedGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream) {
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(stream);
  } catch (...) {
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

size_t CapturedGraph::non_kernel_nodes() const {
  size_t count = 0;
  MC_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  MC_CUDA_CHECK(cudaGraphGetNodes(graph_, nodes.data(), &count));
  size_t other = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    MC_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    other += type != cudaGraphNodeTypeKernel && type != cudaGraphNodeTypeEmpty;
  }
  return other;
}

}  // namespace

GraphReplays time_graph_replays(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                const MeasureOptions& options, L2Flush* flush) {
  GraphReplays result;
  std::optional<CapturedGraph> graph;
  {
    CuptiTimer::Pause no_records(CuptiTimer::instance());
    graph.emplace(enqueue, stream);
    for (int i = 0; i < 3; ++i) graph->launch(stream);
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
    SampleConfig replays;
    replays.rule.min_samples = std::max(options.min_samples, 20);
    replays.rule.max_rel_stddev = options.max_rel_stddev;
    replays.rule.max_seconds = std::max(2.0, options.max_seconds_per_node);
    replays.cold = options.cold;
    set_model_timing(result.timing, sample_with_events([&](cudaStream_t s) { graph->launch(s); }, stream, replays,
                                                       options.cold ? flush : nullptr));
  }
  result.non_kernel_nodes = graph->non_kernel_nodes();
  add_kernel_breakdown(result.timing, *graph, stream);
  return result;
}

}  // namespace modelcost::cuda
