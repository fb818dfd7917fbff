// One pass of enqueued work captured into a CUDA graph, and its replays timed the way a
// deployment replays a captured graph. The as-written (nodes) and deployed (groups) whole-model
// runs share it.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "modelcost/measure.h"
#include "timing/l2_flush.h"

namespace modelcost::cuda {

class Timing;

struct GraphReplays {
  ModelMeasurement timing;      // the replays; the kernel breakdown where CUPTI runs
  size_t non_kernel_nodes = 0;  // memset, copy, host or event nodes in the graph
};

// Captures what `enqueue` launches on `stream` into a CUDA graph (thread-local capture; throws
// Error, leaving no capture open), replays it three times, then times replays with CUDA events
// (an L2 flush before each where options.cold and `flush` is given) until at least 20 samples
// meet options' stopping rule. CUPTI is detached from the process from the capture to the last
// timed replay (CuptiTimer::Detach of timing.cupti()): with its kernel records on, each kernel of
// a replay waits on CUPTI (about 2 us between kernels on the H100, doubling a small model's
// latency), and attached with the records off it still slowed a batch-1 replay by ~9 %. The
// kernel breakdown (kernels per replay, busy time, span, the replay's kernels) then comes from 11
// more replays with records on. The phases are booked in timing.ledger.
GraphReplays time_graph_replays(Timing& timing, const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                const MeasureOptions& options, L2Flush* flush);

}  // namespace modelcost::cuda
