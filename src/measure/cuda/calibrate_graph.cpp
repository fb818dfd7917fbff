#include "measure/cuda/calibrate_graph.h"

#include "measure/cuda/captured_graph.h"
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/cupti_timer.h"
#include "measure/cuda/sampler.h"

namespace modelcost::cuda {

double graph_time_per_launch_us(cudaStream_t stream, int count, const std::function<void(int)>& enqueue, int warmups,
                                int replays) {
  // Records off from the capture on: a graph captured while they are on keeps the tracing.
  CuptiTimer::Pause no_records(CuptiTimer::instance());
  const CapturedGraph graph([&](cudaStream_t) {
    for (int i = 0; i < count; ++i) enqueue(i);
  }, stream);
  for (int w = 0; w < warmups; ++w) graph.launch(stream);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  SampleConfig config;  // exactly `replays` samples
  config.rule.min_samples = replays;
  config.rule.max_samples = replays;
  config.rule.max_noise = 0;
  config.rule.max_seconds = 1e9;
  const NodeMeasurement m = sample_with_events([&](cudaStream_t s) { graph.launch(s); }, stream, config, nullptr);
  return m.median_us / count;
}

}  // namespace modelcost::cuda
