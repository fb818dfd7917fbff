#include "measure/cuda/calibrate_graph.h"

#include "measure/cuda/cuda_check.h"
#include "measure/cuda/cupti_timer.h"
#include "measure/cuda/sampler.h"

namespace modelcost::cuda {
namespace {

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

}  // namespace

double graph_time_per_launch_us(cudaStream_t stream, int count, const std::function<void(int)>& enqueue, int warmups,
                                int replays) {
  // Records off from the capture on: a graph captured while they are on keeps the tracing.
  CuptiTimer::Pause no_records(CuptiTimer::instance());
  Graph g;
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < count; ++i) enqueue(i);
  } catch (...) {  // leave the stream out of capture mode for whoever uses it next
    if (cudaStreamEndCapture(stream, &g.graph) == cudaSuccess && g.graph) cudaGraphDestroy(g.graph);
    g.graph = nullptr;
    throw;
  }
  MC_CUDA_CHECK(cudaStreamEndCapture(stream, &g.graph));
  MC_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  for (int w = 0; w < warmups; ++w) MC_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  SampleConfig config;  // exactly `replays` samples
  config.rule.min_samples = replays;
  config.rule.max_samples = replays;
  config.rule.max_rel_stddev = 0;
  config.rule.max_seconds = 1e9;
  const NodeMeasurement m = sample_with_events([&](cudaStream_t s) { MC_CUDA_CHECK(cudaGraphLaunch(g.exec, s)); },
                                               stream, config, nullptr);
  return m.median_us / count;
}

}  // namespace modelcost::cuda
