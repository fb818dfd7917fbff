// All-reduce bus bandwidth and per-step latency of NCCL over the local GPUs (docs/llm.md,
// "Tensor parallelism"). libnccl is loaded with dlopen like the rest of this module's optional
// libraries, so a machine without it still calibrates the single-GPU figures.
#include "measure/cuda/allreduce_calibration.h"
#include "measure/cuda/nccl_api.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace modelcost::cuda {
namespace {

// One communicator, buffer and stream per GPU.
class Ranks {
 public:
  Ranks(const NcclApi& nccl, int count, size_t bytes) : nccl_(nccl), comms_(count), buffers_(count), streams_(count) {
    std::vector<int> devices(count);
    for (int i = 0; i < count; ++i) devices[i] = i;
    ok_ = nccl.comm_init_all(comms_.data(), count, devices.data()) == ncclSuccess;
    for (int i = 0; ok_ && i < count; ++i) {
      ok_ = cudaSetDevice(i) == cudaSuccess && cudaMalloc(&buffers_[i], bytes) == cudaSuccess &&
            cudaMemset(buffers_[i], 0, bytes) == cudaSuccess && cudaStreamCreate(&streams_[i]) == cudaSuccess;
    }
  }
  ~Ranks() {
    for (size_t i = 0; i < comms_.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      if (buffers_[i]) cudaFree(buffers_[i]);
      if (streams_[i]) cudaStreamDestroy(streams_[i]);
      if (comms_[i]) nccl_.comm_destroy(comms_[i]);
    }
  }
  bool ok() const { return ok_; }

  // Seconds per fp16 all-reduce of `bytes`, from the host clock over `iterations` back-to-back ones.
  double seconds_per_allreduce(size_t bytes, int iterations) {
    run(bytes, 5);
    const auto start = std::chrono::steady_clock::now();
    run(bytes, iterations);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  }

 private:
  void run(size_t bytes, int iterations) {
    for (int k = 0; k < iterations && ok_; ++k) {
      nccl_.group_start();
      for (size_t i = 0; i < comms_.size(); ++i)
        ok_ = ok_ && nccl_.all_reduce(buffers_[i], buffers_[i], bytes / 2, ncclFloat16, ncclSum, comms_[i], streams_[i]) == ncclSuccess;
      ok_ = nccl_.group_end() == ncclSuccess && ok_;
    }
    for (size_t i = 0; i < comms_.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      ok_ = cudaStreamSynchronize(streams_[i]) == cudaSuccess && ok_;
    }
  }

  const NcclApi& nccl_;
  std::vector<ncclComm_t> comms_;
  std::vector<void*> buffers_;
  std::vector<cudaStream_t> streams_;
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
  double small_s = 0, large_s = 0;
  int current = 0;
  cudaGetDevice(&current);
  struct Restore { int device; ~Restore() { cudaSetDevice(device); } } restore{current};
  {
    Ranks ranks(nccl, count, large);
    if (ranks.ok()) {
      small_s = ranks.seconds_per_allreduce(small, 200);
      large_s = ranks.seconds_per_allreduce(large, 20);
    }
    if (!ranks.ok() || large_s <= small_s) {
      f.note = "all-reduce: NCCL failed on this machine, not measured";
      return f;
    }
  }
  const double n = count;
  f.ranks = count;
  // The ring model of docs/llm.md: t = 2 (n-1) latency + 2 (n-1)/n x bytes / bus bandwidth.
  f.step_latency_us = small_s / (2 * (n - 1)) * 1e6;
  f.bus_gbps = 2 * (n - 1) / n * large / (large_s - small_s) / 1e9;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "all-reduce: NCCL fp16 sum over %d GPUs, 1 KiB (%.1f us) and 256 MiB (%.3f ms), "
                "host-timed over 200 and 20 back-to-back calls", count, small_s * 1e6, large_s * 1e3);
  f.note = buf;
  return f;
}

}  // namespace modelcost::cuda
