// calibrate's CUDA graphs: `count` launches captured into one graph, its replays timed with CUDA
// events, CUPTI's kernel records off from the capture to the last replay (as in a deployment
// without a profiler). The kernel overhead and gap and the grid's time per call share it.
#pragma once
#include <cuda_runtime.h>

#include <functional>

namespace modelcost::cuda {

// Median over `replays` timed replays (after `warmups` untimed ones) of the graph's time divided
// by `count`. `enqueue(i)` launches the i-th piece on `stream`; on a throw the stream leaves
// capture mode and the error propagates.
double graph_time_per_launch_us(cudaStream_t stream, int count, const std::function<void(int)>& enqueue, int warmups,
                                int replays);

}  // namespace modelcost::cuda
