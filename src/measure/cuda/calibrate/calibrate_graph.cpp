#include "calibrate/calibrate_graph.h"

#include "core/cuda_check.h"
#include "timing/captured_graph.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::cuda {

double graph_time_per_launch_us(Timing& timing, cudaStream_t stream, const GraphLaunches& launches,
                                const std::function<void(int)>& enqueue) {
  // CUPTI detached from the capture on, as for a whole-model replay: an attached CUPTI, even with
  // its records off, adds about 0.4 us per kernel in a graph (H100), which the gap and overhead
  // figures would otherwise carry into every prediction.
  CuptiTimer::Detach no_cupti(timing.cupti());
  const CapturedGraph graph([&](cudaStream_t) {
    for (int i = 0; i < launches.count; ++i) enqueue(i);
  }, stream);
  for (int w = 0; w < launches.warmups; ++w) graph.launch(stream);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  SampleConfig config;  // exactly `replays` samples
  config.rule.min_samples = launches.replays;
  config.rule.max_samples = launches.replays;
  config.rule.max_noise = 0;
  config.rule.max_seconds = 1e9;
  const NodeMeasurement m = sample_with_events(timing, [&](cudaStream_t s) { graph.launch(s); }, stream, config, nullptr);
  return m.median_us / launches.count;
}

}  // namespace modelcost::cuda
