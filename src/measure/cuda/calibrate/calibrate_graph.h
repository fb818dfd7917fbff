// calibrate's CUDA graphs: `count` launches captured into one graph, its replays timed with CUDA
// events, CUPTI detached from the capture to the last replay (as in a deployment without a
// profiler). The kernel overhead and gap and the grid's time per call share it.
#pragma once
#include <cuda_runtime.h>

#include <functional>

namespace modelcost::cuda {

class Timing;

// How many launches one graph holds and how often it is replayed.
struct GraphLaunches {
  int count = 0;    // launches captured into the graph
  int warmups = 0;  // untimed replays first
  int replays = 0;  // timed replays
};

// Median over the timed replays of the graph's time divided by its launch count. `enqueue(i)`
// launches the i-th piece on `stream`; on a throw the stream leaves capture mode and the error
// propagates. timing.cupti() is detached meanwhile.
double graph_time_per_launch_us(Timing& timing, cudaStream_t stream, const GraphLaunches& launches,
                                const std::function<void(int)>& enqueue);

}  // namespace modelcost::cuda
