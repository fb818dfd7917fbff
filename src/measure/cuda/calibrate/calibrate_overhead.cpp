// The fixed cost of a kernel in a CUDA graph: the idle gap between the end of one kernel and the
// start of the next dependent one (the GPU's global timer read inside each kernel); the time per
// empty kernel launched back to back; and the time per small kernel that reads and writes DRAM
// (a 256 KiB copy from memory no earlier kernel touched), which is the least a real kernel takes.
#include <algorithm>
#include <functional>
#include <vector>

#include "calibrate/calibrate_graph.h"
#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

constexpr int kKernels = 1000;       // kernels per graph
constexpr int kReplays = 20;         // graph launches timed
constexpr unsigned kSpinNs = 5000;   // the gap is read between kernels that each run 5 us
constexpr size_t kSmallCopyBytes = 256 << 10;  // per small kernel: 256 KiB read, 256 KiB written

struct GraphRun {
  double per_kernel_us = 0;  // median over replays of the graph time / kernels
  double gap_us = 0;         // median idle time between consecutive kernels of the last replay
};

// Captures `enqueue(i)` for i < kKernels into one graph and times its replays; the gaps come
// from the stamps the last replay left.
GraphRun time_graph(Timing& timing, cudaStream_t stream, const std::function<void(int)>& enqueue,
                    const unsigned long long* d_stamps) {
  GraphRun run;
  run.per_kernel_us = graph_time_per_launch_us(timing, stream, {kKernels, 3, kReplays}, enqueue);
  if (!d_stamps) return run;
  std::vector<unsigned long long> host(2 * kKernels);
  MC_CUDA_CHECK(cudaMemcpy(host.data(), d_stamps, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
  std::vector<double> gaps;
  for (int i = 1; i < kKernels; ++i)
    if (host[2 * i] >= host[2 * i - 1]) gaps.push_back((host[2 * i] - host[2 * i - 1]) * 1e-3);
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    run.gap_us = gaps[gaps.size() / 2];
  }
  return run;
}

GraphRun timestamp_chain(Timing& timing, cudaStream_t stream, unsigned spin_ns) {
  DeviceBuffer stamps(sizeof(unsigned long long) * 2 * kKernels);
  auto* d_stamps = static_cast<unsigned long long*>(stamps.data());
  return time_graph(timing, stream, [&](int i) { launch_timestamp_kernel(d_stamps, i, spin_ns, stream); }, d_stamps);
}

// Each kernel copies its own 256 KiB slice, so every one reads memory no earlier kernel left in L2.
GraphRun small_copy_chain(Timing& timing, cudaStream_t stream, int blocks) {
  DeviceBuffer src(kSmallCopyBytes * kKernels), dst(kSmallCopyBytes * kKernels);
  auto* s = static_cast<char*>(src.data());
  auto* d = static_cast<char*>(dst.data());
  return time_graph(timing, stream, [&](int i) {
    launch_stream_copy(s + i * kSmallCopyBytes, d + i * kSmallCopyBytes, kSmallCopyBytes, blocks, stream);
  }, nullptr);
}

}  // namespace

void calibrate_kernel_overhead(Timing& timing, cudaStream_t stream, CalibrationResult& r, double dram_gbps, int blocks) {
  const GraphRun empty = timestamp_chain(timing, stream, 0);
  const GraphRun spinning = timestamp_chain(timing, stream, kSpinNs);
  const GraphRun small = small_copy_chain(timing, stream, blocks);
  r.graph_kernel_us = empty.per_kernel_us;
  r.small_kernel_us = small.per_kernel_us;
  r.kernel_gap_us = spinning.gap_us;
  // What a small kernel takes beyond its traffic at full bandwidth and the gap before it.
  const double traffic_us = dram_gbps > 0 ? 2.0 * kSmallCopyBytes / (dram_gbps * 1e9) * 1e6 : 0;
  r.kernel_overhead_us = std::max(0.0, small.per_kernel_us - spinning.gap_us - traffic_us);
  r.notes.push_back("kernel overhead: 1000 dependent 256 KiB copies from fresh memory in a CUDA graph, median of 20 "
                    "replays, less the gap and the copy's traffic at the measured bandwidth");
  r.notes.push_back("empty kernel: 1000 empty one-block kernels in a CUDA graph, median of 20 replays");
  r.notes.push_back("kernel gap: global-timer stamps of 1000 dependent 5 us kernels in a CUDA graph, median end-to-start");
}

}  // namespace modelcost::cuda
