#include "timing/graph_replay.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/cuda_check.h"
#include "measure/sampling.h"
#include "measure/statistics.h"
#include "timing/captured_graph.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

// Kernel count, busy time and span of one replay, from CUPTI records of 11 more replays (their
// kernels carry the graph launch's external id); medians. False where CUPTI recorded none.
bool add_kernel_breakdown(Timing& timing, ModelMeasurement& result, const CapturedGraph& graph, cudaStream_t stream) {
  LedgerScope phase(timing.ledger, "graph replays: kernel breakdown (CUPTI records)");
  CuptiTimer& timer = timing.cupti();
  if (!timer.ok()) return false;
  timer.collect();
  std::vector<uint64_t> ids;
  for (int i = 0; i < 11; ++i) {
    ids.push_back(timer.next_external_id());
    timer.push(ids.back());
    graph.launch(stream);
    timer.pop();
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  auto spans = timer.collect();
  std::vector<double> busy, span, count;
  for (uint64_t id : ids) {
    auto it = spans.find(id);
    if (it == spans.end()) return false;
    busy.push_back(it->second.kernel_ns / 1e3);
    span.push_back((it->second.last_end - it->second.first_start) / 1e3);
    count.push_back(static_cast<double>(it->second.names.size()));
  }
  result.has_kernel_breakdown = true;
  result.kernel_busy_us = summarize(busy).median;
  result.kernel_span_us = summarize(span).median;
  result.kernels_per_run = static_cast<int>(summarize(count).median);
  const size_t median_replay = std::min_element(span.begin(), span.end(), [&](double a, double b) {
                                 return std::abs(a - result.kernel_span_us) < std::abs(b - result.kernel_span_us);
                               }) - span.begin();
  const KernelSpan& replay = spans.at(ids[median_replay]);
  for (size_t k = 0; k < replay.names.size(); ++k)
    result.replay_kernels.push_back({short_kernel_name(replay.names[k]), (replay.starts[k] - replay.first_start) / 1e3,
                                     replay.durations_ns[k] / 1e3});
  return true;
}

}  // namespace

GraphReplays time_graph_replays(Timing& timing, const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                const MeasureOptions& options, L2Flush* flush) {
  GraphReplays result;
  std::optional<CapturedGraph> graph;
  {
    CuptiTimer::Detach no_cupti(timing.cupti());
    {
      LedgerScope phase(timing.ledger, "graph replays: capture, instantiate, warm-up");
      graph.emplace(enqueue, stream);
      for (int i = 0; i < 3; ++i) graph->launch(stream);
      MC_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    LedgerScope phase(timing.ledger, "graph replays: timed replays");
    SampleConfig replays;
    replays.rule.min_samples = std::max(options.min_samples, 20);
    replays.rule.max_noise = options.max_noise;
    replays.rule.convergence = options.convergence;
    replays.rule.max_seconds = std::max(2.0, options.max_seconds_per_node);
    replays.cold = options.cold;
    replays.tally = "replays";
    set_model_timing(result.timing, sample_with_events(timing, [&](cudaStream_t s) { graph->launch(s); }, stream, replays,
                                                       options.cold ? flush : nullptr));
  }
  result.non_kernel_nodes = graph->non_kernel_nodes();
  if (!add_kernel_breakdown(timing, result.timing, *graph, stream) && timing.cupti().ok()) {
    // A graph instantiated while CUPTI was detached may run unrecorded: the same pass, captured anew.
    const CapturedGraph recorded(enqueue, stream);
    recorded.launch(stream);
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
    add_kernel_breakdown(timing, result.timing, recorded, stream);
  }
  return result;
}

}  // namespace modelcost::cuda
