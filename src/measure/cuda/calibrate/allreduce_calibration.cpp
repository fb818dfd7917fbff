// All-reduce bus bandwidth and per-step latency of NCCL over the local GPUs (docs/llm.md,
// "Tensor parallelism"), timed inside a CUDA graph as the deployed decode step runs its
// all-reduces (launched eagerly, each pays several times the host's launch cost instead). libnccl is loaded with dlopen like the rest of this module's optional
// libraries, so a machine without it still calibrates the single-GPU figures.
#include "calibrate/allreduce_calibration.h"
#include "calibrate/nccl_api.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

namespace modelcost::cuda {
namespace {

// The rank's all-reduces of one size captured in a CUDA graph, as the decode step runs them.
struct GraphedAllReduce {
  size_t bytes = 0;
  int calls = 0;
  double seconds = 0;  // per all-reduce: the least of three replays of the graph
};

// One thread per GPU, each with its communicator (from one unique id) and stream, as the tensor-
// parallel decode step runs. The ranks' replays are enqueued back to back without a host wait, so
// after the first the collectives hold them in step; the least of three replays is kept.
class RankThread {
 public:
  RankThread(const NcclApi& nccl, ncclUniqueId id, int rank, int count, std::vector<GraphedAllReduce> sizes)
      : nccl_(nccl), id_(id), rank_(rank), count_(count), sizes_(std::move(sizes)) {}
  void run() {
    ok_ = cudaSetDevice(rank_) == cudaSuccess && nccl_.comm_init_rank(&comm_, count_, id_, rank_) == ncclSuccess;
    size_t most = 0;
    for (const auto& s : sizes_) most = std::max(most, s.bytes);
    ok_ = ok_ && cudaMalloc(&buffer_, most) == cudaSuccess && cudaMemset(buffer_, 0, most) == cudaSuccess &&
          cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess;
    for (auto& s : sizes_)
      if (ok_) time(s);
    if (buffer_) cudaFree(buffer_);
    if (stream_) cudaStreamDestroy(stream_);
    if (comm_) nccl_.comm_destroy(comm_);
  }
  bool ok() const { return ok_; }
  const std::vector<GraphedAllReduce>& sizes() const { return sizes_; }

 private:
  bool enqueue(const GraphedAllReduce& s) {
    return nccl_.all_reduce(buffer_, buffer_, s.bytes / 2, ncclFloat16, ncclSum, comm_, stream_) == ncclSuccess;
  }
  void time(GraphedAllReduce& s) {
    ok_ = enqueue(s) && cudaStreamSynchronize(stream_) == cudaSuccess;  // eager once: NCCL sets up outside the capture
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ok_ = ok_ && cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    for (int i = 0; ok_ && i < s.calls; ++i) ok_ = enqueue(s);
    ok_ = cudaStreamEndCapture(stream_, &graph) == cudaSuccess && ok_ && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    cudaEvent_t events[4] = {};
    for (auto& e : events) ok_ = ok_ && cudaEventCreate(&e) == cudaSuccess;
    ok_ = ok_ && cudaGraphLaunch(exec, stream_) == cudaSuccess;  // warm-up: brings the ranks into step
    for (int r = 0; ok_ && r < 3; ++r)
      ok_ = cudaEventRecord(events[r], stream_) == cudaSuccess && cudaGraphLaunch(exec, stream_) == cudaSuccess;
    ok_ = ok_ && cudaEventRecord(events[3], stream_) == cudaSuccess && cudaStreamSynchronize(stream_) == cudaSuccess;
    s.seconds = 1e30;
    for (int r = 0; ok_ && r < 3; ++r) {
      float ms = 0;
      ok_ = cudaEventElapsedTime(&ms, events[r], events[r + 1]) == cudaSuccess;
      s.seconds = std::min(s.seconds, ms * 1e-3 / s.calls);
    }
    for (auto& e : events)
      if (e) cudaEventDestroy(e);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }

  const NcclApi& nccl_;
  ncclUniqueId id_;
  int rank_, count_;
  std::vector<GraphedAllReduce> sizes_;
  ncclComm_t comm_ = nullptr;
  void* buffer_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool ok_ = false;
};

}  // namespace

AllReduceFigures calibrate_allreduce() {
  AllReduceFigures f;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    f.note = "all-reduce: one GPU, nothing to measure";
    return f;
  }
  const NcclApi* loaded = nccl_api();
  if (!loaded) {
    f.note = "all-reduce: libnccl.so.2 not found, not measured";
    return f;
  }
  const NcclApi& nccl = *loaded;
  const size_t large = size_t(256) << 20, small = 1024;
  int current = 0;
  cudaGetDevice(&current);
  struct Restore { int device; ~Restore() { cudaSetDevice(device); } } restore{current};
  ncclUniqueId id;
  if (nccl.get_unique_id(&id) != ncclSuccess) {
    f.note = "all-reduce: NCCL failed on this machine, not measured";
    return f;
  }
  // 1 KiB to 256 MiB in steps of 4 (2 MiB beside 1 and 4: a prefill chunk's all-reduce): NCCL
  // changes protocol and channel count between them, so the middle sizes are timed, not drawn.
  std::vector<GraphedAllReduce> sizes;
  for (size_t bytes = small; bytes <= large; bytes *= 4) {
    sizes.push_back({bytes, bytes <= (size_t(1) << 20) ? 200 : bytes <= (size_t(16) << 20) ? 50 : 10});
    if (bytes == (size_t(1) << 20)) sizes.push_back({bytes * 2, 50});
  }
  std::vector<RankThread> ranks;
  for (int r = 0; r < count; ++r) ranks.emplace_back(nccl, id, r, count, sizes);
  std::vector<std::thread> threads;
  for (auto& rank : ranks) threads.emplace_back([&rank] { rank.run(); });
  for (auto& t : threads) t.join();
  bool ok = true;
  for (const auto& rank : ranks) ok = ok && rank.ok();
  const double small_s = ranks[0].sizes().front().seconds, large_s = ranks[0].sizes().back().seconds;
  if (!ok || large_s <= small_s) {
    f.note = "all-reduce: NCCL failed on this machine, not measured";
    return f;
  }
  const double n = count;
  f.ranks = count;
  // The ring model of docs/llm.md: t = 2 (n-1) latency + 2 (n-1)/n x bytes / bus bandwidth.
  f.step_latency_us = small_s / (2 * (n - 1)) * 1e6;
  f.bus_gbps = 2 * (n - 1) / n * large / (large_s - small_s) / 1e9;
  for (const auto& s : ranks[0].sizes()) f.bytes_us.emplace_back(static_cast<double>(s.bytes), s.seconds * 1e6);
  char buf[240];
  std::snprintf(buf, sizeof(buf), "all-reduce: NCCL fp16 sum over %d GPUs, one thread each, %zu sizes from 1 KiB (%.2f us) to "
                "256 MiB (%.3f ms), 200 to 10 back-to-back calls each captured in a CUDA graph as the decode step runs them",
                count, sizes.size(), small_s * 1e6, large_s * 1e3);
  f.note = buf;
  return f;
}

}  // namespace modelcost::cuda
