// Times multi-head latent attention's decode kernel (measure/cuda/llm/latent_decoding.cu) alone,
// at the plan's split and at fixed chunk sizes, over caches read from DRAM (copies cycled past the
// L2): per shape and chunk, microseconds per launch (both kernels) and the cache's GB/s.
// Usage: latent_decoding
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/device_buffer.h"
#include "core/device_info.h"
#include "core/kernels.h"
#include "llm/latent_decoding.h"

namespace mc = modelcost::cuda;

namespace {

constexpr int kLaunches = 20;

// Microseconds per launch of `launches` in one CUDA graph, the best of three replays.
float time_split(const mc::LatentDecodingShape& s, const mc::LatentDecodingSplit& split, const std::vector<__half*>& caches,
                 const __half* q, float* workspace, __half* out, cudaStream_t stream) {
  const float scale = 0.072f;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  mc::launch_latent_decoding(s, split, {q, caches[0], workspace, out, scale}, stream);
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < kLaunches; ++i)
    mc::launch_latent_decoding(s, split, {q, caches[static_cast<size_t>(i) % caches.size()], workspace, out, scale}, stream);
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int r = 0; r < 4; ++r) {
    cudaEventRecord(start, stream);
    cudaGraphLaunch(exec, stream);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0) best = std::min(best, ms * 1e3f / kLaunches);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return best;
}

}  // namespace

int main() {
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 1;
  const int sms = mc::current_device_multiprocessors();
  std::printf("batch,heads,context,chunk,splits,us,cache_gbps\n");
  for (const int heads : {16, 128})
    for (const int batch : {1, 8, 32, 64})
      for (const int64_t context : {128, 1024, 2048, 8192}) {
        const mc::LatentDecodingShape s{batch, heads, 512, 64, context, context};
        const double cache_bytes = 2.0 * batch * context * 576;
        const int copies = static_cast<int>(std::clamp(400e6 / cache_bytes, 1.0, 8.0));
        std::vector<modelcost::cuda::DeviceBuffer> buffers(static_cast<size_t>(copies));
        std::vector<__half*> caches;
        for (auto& b : buffers) {
          b.resize(static_cast<size_t>(cache_bytes));
          mc::launch_fill_random(mc::ElementType::kFloat16, b.data(), static_cast<int64_t>(cache_bytes / 2), -1, 1, 3, stream);
          caches.push_back(static_cast<__half*>(b.data()));
        }
        mc::DeviceBuffer q(static_cast<size_t>(batch) * heads * 576 * 2), out(static_cast<size_t>(batch) * heads * 512 * 2);
        mc::launch_fill_random(mc::ElementType::kFloat16, q.data(), int64_t(batch) * heads * 576, -1, 1, 4, stream);
        const mc::LatentDecodingSplit planned = mc::plan_latent_decoding(s, sms);
        std::vector<mc::LatentDecodingSplit> splits = {planned};
        for (const int chunk : {64, 128, 256, 512, 1024})
          if (chunk < context * 2 && chunk != planned.chunk) splits.push_back({chunk, static_cast<int>((context + chunk - 1) / chunk)});
        for (const auto& split : splits) {
          if (split.splits > modelcost::latent_decoding_most_splits) continue;
          mc::DeviceBuffer workspace(mc::latent_decoding_workspace_floats(s, split) * sizeof(float));
          const float us = time_split(s, split, caches, static_cast<const __half*>(q.data()), static_cast<float*>(workspace.data()),
                                      static_cast<__half*>(out.data()), stream);
          std::printf("%d,%d,%lld,%d%s,%d,%.2f,%.0f\n", batch, heads, static_cast<long long>(context), split.chunk,
                      &split == &splits[0] ? "(plan)" : "", split.splits, us, cache_bytes * modelcost::latent_decoding_head_tiles(heads) / us / 1e3);
        }
      }
  cudaStreamDestroy(stream);
  return 0;
}
