// NCCL all-reduce over every local GPU, for the tensor-parallel model of `modelcost llm`.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace modelcost::cuda {

struct AllReduceFigures {
  int ranks = 0;               // GPUs in the all-reduce; 0 when not measured
  double bus_gbps = 0;         // 2 (n-1)/n x bytes / time of a 256 MiB all-reduce, latency removed (in a CUDA graph)
  double step_latency_us = 0;  // time of a 1 KiB all-reduce over the ring's 2 (n-1) steps
  std::vector<std::pair<double, double>> bytes_us;  // every size timed (1 KiB to 256 MiB) with its time
  std::string note;            // how, or why not measured
};

// Loads libnccl at run time; one GPU or no libnccl gives ranks = 0 and a note saying why.
AllReduceFigures calibrate_allreduce();

}  // namespace modelcost::cuda
