// calibrate's samples of the deployed LLM step's own kernels (docs/llm.md) on generic shapes,
// none of them a particular model's: the skinny weight product at batch 1 and 32, flash-decoding,
// the prefill's causal flash attention, RMSNorm and the other row kernels (SiLU x up, rotary),
// from a decode step's few rows to a long prefill's many. Each is timed as a CUDA graph of back-to-back calls,
// as the step replays them (the time per call includes the idle time after it). The products and
// the attention read a fresh copy of their weights or cache on each call, spread over more than
// the L2 holds, as the step's layers do; the rows stay in L2, as the step's activations do.
#include <algorithm>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/kernels.h"
#include "gemm/skinny_gemm.h"
#include "llm/step_kernels.h"
#include "llm/flash_decoding.h"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {
namespace {

constexpr size_t kPoolBytes = size_t(320) << 20;  // weights or caches cycled through: several times the L2
constexpr int kReplays = 9;

// Microseconds per call of `calls` calls captured in one CUDA graph (call i gets its index): the
// graph replayed back to back with an event between replays, as the decode step is replayed, so
// each replay's launch is queued behind the previous one and not paid in its time; the median of
// kReplays replays after one warm-up.
double graph_us_per_call(cudaStream_t stream, int calls, const std::function<void(int)>& enqueue) {
  enqueue(0);  // loads the kernel's module outside the capture
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) enqueue(i);
  MC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  MC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<cudaEvent_t> events(kReplays + 1);
  for (auto& e : events) MC_CUDA_CHECK(cudaEventCreate(&e));
  MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  MC_CUDA_CHECK(cudaEventRecord(events[0], stream));
  for (int r = 0; r < kReplays; ++r) {
    MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MC_CUDA_CHECK(cudaEventRecord(events[r + 1], stream));
  }
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> times(kReplays);
  for (int r = 0; r < kReplays; ++r) MC_CUDA_CHECK(cudaEventElapsedTime(&times[r], events[r], events[r + 1]));
  for (auto& e : events) cudaEventDestroy(e);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2] * 1e3 / calls;
}

// Calls per graph (at least 100) and distinct copies of `bytes` each: enough copies to overflow the L2.
struct Cycle {
  int calls = 0, copies = 0;
};
Cycle cycle_for(size_t bytes) {
  const size_t copies = std::max<size_t>(1, std::min<size_t>(kPoolBytes / std::max<size_t>(bytes, 1), 128));
  return {static_cast<int>(std::max<size_t>(100, copies)), static_cast<int>(copies)};
}

LibraryKernelSample sample(const std::string& kind, const std::string& shape, const std::string& implementation, double bytes,
                           double us) {
  LibraryKernelSample s;
  s.kind = kind;
  s.shape = shape;
  s.implementation = implementation;
  s.bytes = bytes;
  s.graph_us = us;
  s.kernel_us = us;
  s.kernels = 1;
  return s;
}

void products(cudaStream_t stream, DeviceBuffer& pool, std::vector<LibraryKernelSample>& out) {
  // K of 2048 and more: the kernel splits K over 8 warps of 8 chunks of 32 per trip.
  // N, K: square, wide and tall products of small (896) to large (4096) widths
  const std::pair<int, int> shapes[] = {{2048, 2048}, {8192, 2048}, {4096, 4096}, {16384, 4096},
                                        {1152, 896},  {896, 4864},  {9728, 896}};
  for (const int rows : {1, 32}) {
    for (const auto& [n, k] : shapes) {
      const size_t weight_bytes = size_t(n) * k * 2;
      const Cycle c = cycle_for(weight_bytes);
      DeviceBuffer x(size_t(rows) * k * 2), y(size_t(rows) * n * 2);
      launch_fill_random(ElementType::kFloat16, x.data(), int64_t(rows) * k, -1.f, 1.f, 5, stream);
      const __half* w0 = static_cast<const __half*>(pool.data());
      const double us = graph_us_per_call(stream, c.calls, [&](int i) {
        const __half* w = w0 + size_t(i % c.copies) * n * k;
        launch_skinny_gemm({static_cast<const __half*>(x.data()), w, static_cast<__half*>(y.data()), rows, n, k, false}, stream);
      });
      const double bytes = double(weight_bytes) + 2.0 * rows * (k + n);
      out.push_back(sample(rows == 1 ? "decode_gemm_m1" : "decode_gemm_m32", fmt::format("M={} N={} K={}", rows, n, k),
                           "modelcost skinny GEMM", bytes, us));
    }
  }
}

void attention(cudaStream_t stream, DeviceBuffer& pool, int sms, std::vector<LibraryKernelSample>& out) {
  struct Shape {
    int batch, heads, kv_heads, head_dim, context;
  };
  // Groups of 1 to 8 query heads per kv head, batches to 128
  const Shape shapes[] = {{1, 32, 8, 128, 512},  {1, 32, 8, 128, 8192}, {8, 32, 8, 128, 2048}, {16, 32, 8, 128, 4096},
                          {1, 16, 16, 64, 1024}, {4, 16, 16, 64, 4096}, {1, 14, 2, 64, 2048},  {32, 14, 2, 64, 1024},
                          {128, 32, 4, 64, 512}, {64, 28, 4, 128, 1024}};
  prepare_flash_decoding();
  for (const Shape& s : shapes) {
    const FlashDecodingShape shape{s.batch, s.heads, s.kv_heads, s.head_dim, s.context, s.context};
    const FlashDecodingSplit split = plan_flash_decoding(shape, sms);
    const size_t one = size_t(s.batch) * s.kv_heads * s.context * s.head_dim;  // elements of K (or V)
    const Cycle c = cycle_for(2 * one * 2);
    const size_t rows = size_t(s.batch) * s.heads * s.head_dim;
    DeviceBuffer q(rows * 2), o(rows * 2), workspace(flash_decoding_workspace_floats(shape, split) * sizeof(float));
    launch_fill_random(ElementType::kFloat16, q.data(), int64_t(rows), -1.f, 1.f, 6, stream);
    const __half* cache = static_cast<const __half*>(pool.data());
    const double us = graph_us_per_call(stream, c.calls, [&](int i) {
      const __half* k = cache + size_t(i % c.copies) * 2 * one;
      launch_flash_decoding(shape, split, {static_cast<const __half*>(q.data()), k, k + one, static_cast<float*>(workspace.data()),
                                           static_cast<__half*>(o.data())}, stream);
    });
    const double bytes = 2.0 * one * 2 + 2.0 * rows * 2;
    out.push_back(sample("decode_attention",
                         fmt::format("B={} heads={}/{} d={} context={}", s.batch, s.heads, s.kv_heads, s.head_dim, s.context),
                         fmt::format("modelcost flash-decoding, {} chunks of {}", split.splits, split.chunk), bytes, us));
    out.back().kernels = 2;
  }
}

// Causal flash attention over prompts or chunks after cached positions, query heads grouped on
// key/value heads, O written token-major: the prefill's attention. K = the keys of a row's walk.
void prefill_attention(cudaStream_t stream, std::vector<LibraryKernelSample>& out) {
  struct Shape {
    int batch, heads, kv_heads, head_dim, tokens, past;
  };
  const Shape shapes[] = {{1, 32, 8, 128, 256, 0},  {1, 32, 8, 128, 2048, 0}, {4, 32, 8, 128, 1024, 0},
                          {1, 32, 4, 64, 512, 0},   {8, 32, 4, 64, 2048, 0},  {2, 16, 16, 64, 4096, 0},
                          {1, 32, 8, 128, 512, 1536}, {4, 12, 2, 64, 128, 0}, {1, 32, 8, 128, 4096, 0},
                          {1, 14, 2, 64, 512, 2048}, {1, 28, 4, 128, 256, 4096}, {1, 32, 4, 64, 64, 4032},
                          {8, 32, 4, 64, 128, 0},   {1, 32, 8, 128, 128, 0},  {16, 32, 8, 128, 256, 0},
                          {8, 32, 8, 128, 2048, 0}, {8, 14, 2, 64, 1024, 0}};
  for (const Shape& s : shapes) {
    AttentionShape sh;
    sh.bh = int64_t(s.batch) * s.heads;
    sh.heads = s.heads;
    sh.sq = s.tokens;
    sh.sk = s.past + s.tokens;
    sh.d = s.head_dim;
    sh.group = s.heads / s.kv_heads;
    sh.scale = 0.125f;
    sh.causal = true;
    sh.causal_offset = s.past;
    sh.token_major_out = true;
    const size_t q_elements = size_t(sh.bh) * s.tokens * s.head_dim, kv_elements = size_t(s.batch) * s.kv_heads * sh.sk * s.head_dim;
    DeviceBuffer q(q_elements * 2), k(kv_elements * 2), v(kv_elements * 2), o(q_elements * 2);
    for (DeviceBuffer* b : {&q, &k, &v})
      launch_fill_random(ElementType::kFloat16, b->data(), static_cast<int64_t>(b->bytes() / 2), -1.f, 1.f, 8, stream);
    const double us = graph_us_per_call(stream, 20, [&](int) { launch_flash_attention(sh, q.data(), k.data(), v.data(), o.data(), stream); });
    const double pairs = double(s.tokens) * s.past + double(s.tokens) * (s.tokens + 1) / 2;
    LibraryKernelSample x = sample("prefill_attention",
                                   fmt::format("B={} heads={}/{} d={} tokens={} past={}", s.batch, s.heads, s.kv_heads,
                                               s.head_dim, s.tokens, s.past),
                                   "modelcost causal flash attention", 2.0 * (2.0 * q_elements + 2.0 * kv_elements), us);
    x.flops = 4.0 * double(sh.bh) * s.head_dim * pairs;
    x.k = double(sh.sk);
    out.push_back(x);
  }
}

void rotary(cudaStream_t stream, std::vector<LibraryKernelSample>& out) {
  for (const int rows : {1, 32, 2048, 16384}) {
    const int heads = 32, kv_heads = 8, head_dim = 128, width = (heads + 2 * kv_heads) * head_dim;
    DeviceBuffer qkv(size_t(rows) * width * 2), q(size_t(rows) * heads * head_dim * 2),
        cache(size_t(2) * rows * kv_heads * head_dim * 2);
    launch_fill_random(ElementType::kFloat16, qkv.data(), int64_t(rows) * width, -1.f, 1.f, 9, stream);
    RotaryAppendArgs a;
    a.qkv = static_cast<const __half*>(qkv.data());
    a.q = static_cast<__half*>(q.data());
    a.k_cache = static_cast<__half*>(cache.data());
    a.v_cache = a.k_cache + size_t(rows) * kv_heads * head_dim;
    a.batch = 1;
    a.tokens = rows;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = head_dim;
    a.cache_len = rows;
    const double us = graph_us_per_call(stream, 100, [&](int) { launch_rotary_append(a, stream); });
    out.push_back(sample("decode_rowwise", fmt::format("rotary {}x{}", rows, width), "modelcost rotary + KV append",
                         2.0 * 2.0 * rows * width, us));
  }
}

void rows(cudaStream_t stream, std::vector<LibraryKernelSample>& out) {
  // rows, width: a decode step's few rows to a long prefill's many
  const std::pair<int, int> shapes[] = {{1, 2048}, {1, 8192}, {16, 4096}, {64, 8192}, {256, 8192}, {2048, 2048}, {16384, 4096}};
  for (const auto& [count, width] : shapes) {
    DeviceBuffer x(size_t(count) * width * 2 * 2), gamma(size_t(width) * 2), y(size_t(count) * width * 2);
    launch_fill_random(ElementType::kFloat16, x.data(), int64_t(count) * width * 2, -1.f, 1.f, 7, stream);
    launch_fill(ElementType::kFloat16, gamma.data(), width, 1.f, stream);
    const __half* xs = static_cast<const __half*>(x.data());
    __half* ys = static_cast<__half*>(y.data());
    const double norm = graph_us_per_call(stream, 100, [&](int) {
      launch_rms_norm({xs, static_cast<const __half*>(gamma.data()), ys, count, width, 1e-5f}, stream);
    });
    out.push_back(sample("decode_norm", fmt::format("RMSNorm {}x{}", count, width), "modelcost RMSNorm",
                         2.0 * (2.0 * count * width + width), norm));
    const double silu = graph_us_per_call(stream, 100, [&](int) { launch_silu_mul(xs, ys, count, width, stream); });
    out.push_back(sample("decode_rowwise", fmt::format("SiLU x up {}x{}", count, width), "modelcost SiLU x up",
                         2.0 * 3.0 * count * width, silu));
  }
}

}  // namespace

void calibrate_decode_kernels(cudaStream_t stream, int sms, CalibrationResult& r) {
  DeviceBuffer pool(kPoolBytes);
  launch_fill_random(ElementType::kFloat16, pool.data(), static_cast<int64_t>(kPoolBytes / 2), -1.f, 1.f, 4, stream);
  products(stream, pool, r.library_kernels);
  attention(stream, pool, sms, r.library_kernels);
  rows(stream, r.library_kernels);
  rotary(stream, r.library_kernels);
  prefill_attention(stream, r.library_kernels);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  r.notes.push_back("LLM step kernels: skinny products (batch 1 and 32), flash-decoding, causal prefill attention, RMSNorm "
                    "and row kernels on generic shapes, CUDA graphs of back-to-back calls cycling through more weights "
                    "or cache than the L2 holds");
}

}  // namespace modelcost::cuda
