// calibrate's samples of the deployed LLM step's own kernels (docs/llm.md) on generic shapes,
// none of them a particular model's: the weight product at batch 1 and 32 (the skinny kernel or
// cuBLASLt, as the step picks), the experts' grouped product, flash-decoding,
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
#include "llm/step_gemm.h"
#include "llm/expert_kernels.h"
#include "llm/step_kernels.h"
#include "llm/flash_decoding.h"
#include "modelcost/llm.h"
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

// The step's weight products at 1 and 32 rows as the step runs them: StepGemm's choice of the
// skinny kernel or a cuBLASLt algorithm (autotuned on these buffers), whichever is faster.
void products(cudaStream_t stream, DeviceBuffer& pool, std::vector<LibraryKernelSample>& out) {
  // N, K: square, wide and tall products of small (896) to large (4096) widths
  const std::pair<int, int> shapes[] = {{2048, 2048}, {8192, 2048}, {4096, 4096}, {16384, 4096},
                                        {1152, 896},  {896, 4864},  {9728, 896}};
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw Error(kExitRuntime, "cublasLtCreate failed");
  DeviceBuffer workspace(size_t(32) << 20);
  for (const int rows : {1, 32}) {
    for (const auto& [n, k] : shapes) {
      const size_t weight_bytes = size_t(n) * k * 2;
      const Cycle c = cycle_for(weight_bytes);
      DeviceBuffer x(size_t(rows) * k * 2), y(size_t(rows) * n * 2);
      launch_fill_random(ElementType::kFloat16, x.data(), int64_t(rows) * k, -1.f, 1.f, 5, stream);
      const __half* w0 = static_cast<const __half*>(pool.data());
      std::vector<const __half*> copies;
      for (int i = 0; i < c.copies; ++i) copies.push_back(w0 + size_t(i) * n * k);
      StepGemm gemm(lt, {rows, n, k, false}, {workspace.data(), workspace.bytes()});
      gemm.autotune(static_cast<const __half*>(x.data()), copies, static_cast<__half*>(y.data()), stream);
      const double us = graph_us_per_call(stream, c.calls, [&](int i) {
        gemm.enqueue(static_cast<const __half*>(x.data()), copies[i % c.copies], static_cast<__half*>(y.data()), stream);
      });
      const double bytes = double(weight_bytes) + 2.0 * rows * (k + n);
      out.push_back(sample(rows == 1 ? "decode_gemm_m1" : "decode_gemm_m32", fmt::format("M={} N={} K={}", rows, n, k),
                           gemm.description(), bytes, us));
    }
  }
  cublasLtDestroy(lt);
}

void attention(cudaStream_t stream, DeviceBuffer& pool, int sms, std::vector<LibraryKernelSample>& out) {
  struct Shape {
    int batch, heads, kv_heads, head_dim, context;
  };
  // Groups of 1 to 8 query heads per kv head, batches to 256, contexts to 16k, one wave of blocks
  // to several (the kernel's time steps with its waves: fusion/flash_decoding_plan.h)
  const Shape shapes[] = {{1, 32, 8, 128, 512},   {1, 32, 8, 128, 8192},  {8, 32, 8, 128, 2048},  {16, 32, 8, 128, 4096},
                          {1, 16, 16, 64, 1024},  {4, 16, 16, 64, 4096},  {1, 14, 2, 64, 2048},   {32, 14, 2, 64, 1024},
                          {128, 32, 4, 64, 512},  {64, 28, 4, 128, 1024}, {32, 16, 4, 128, 1024}, {32, 8, 2, 128, 1024},
                          {8, 16, 4, 128, 2048},  {64, 16, 4, 128, 512},  {16, 16, 4, 128, 2048}, {32, 32, 8, 128, 1024},
                          {1, 8, 2, 128, 2048},   {4, 32, 8, 128, 16384}, {2, 64, 8, 128, 4096},  {256, 32, 8, 128, 256},
                          {16, 12, 12, 64, 2048}, {48, 28, 4, 128, 2048}, {128, 8, 1, 128, 1024}, {64, 16, 4, 128, 2048}};
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
    const FlashDecodingWork work = flash_decoding_work(shape, sms);
    out.push_back(sample("decode_attention",
                         fmt::format("B={} heads={}/{} d={} context={}", s.batch, s.heads, s.kv_heads, s.head_dim, s.context),
                         fmt::format("modelcost flash-decoding, {} chunks of {}", split.splits, split.chunk), work.bytes, us));
    out.back().kernels = 2;
    out.back().flops = work.flops;
    out.back().k = work.k;
  }
}

// The experts' grouped product with `touched` experts of `rows` pairs each (the routing laid out on
// the host, as the sort kernel leaves it): a decode's 1-16 pairs per expert to a prefill's
// thousands, on narrow (768) to wide (14336) experts. Each call reads a fresh copy of the experts.
void expert_products(cudaStream_t stream, int sms, std::vector<LibraryKernelSample>& out) {
  struct Shape {
    int touched, rows, n, k;
  };
  const Shape shapes[] = {{2, 1, 28672, 4096},  {8, 1, 1536, 2048},   {4, 1, 2816, 2048},    {8, 4, 4096, 14336},
                          {60, 2, 2048, 1408},  {128, 4, 1536, 2048}, {8, 16, 2816, 2048},   {2, 16, 4096, 14336},
                          {8, 32, 28672, 4096}, {60, 40, 2816, 2048}, {128, 64, 2048, 768},  {8, 64, 4096, 14336},
                          {8, 256, 28672, 4096}, {60, 150, 2048, 1408}, {128, 128, 1536, 2048}, {8, 1024, 4096, 14336},
                          {8, 2048, 28672, 4096}, {60, 1100, 2816, 2048}, {128, 1024, 2048, 768}, {16, 512, 1024, 1024}};
  for (const Shape& sh : shapes) {
    const int64_t tile = expert_tile_rows(sh.rows), pairs = int64_t(sh.touched) * sh.rows;
    const int64_t tiles_per_expert = (sh.rows + tile - 1) / tile;
    std::vector<int32_t> pair_of_slot, expert_of_tile;
    for (int e = 0; e < sh.touched; ++e)
      for (int64_t t = 0; t < tiles_per_expert; ++t) {
        expert_of_tile.push_back(e);
        for (int64_t r = t * tile; r < (t + 1) * tile; ++r) pair_of_slot.push_back(r < sh.rows ? static_cast<int32_t>(e * sh.rows + r) : -1);
      }
    const int32_t tiles = static_cast<int32_t>(expert_of_tile.size());
    const size_t weight_bytes = size_t(sh.touched) * sh.n * sh.k * 2;
    const size_t copies = std::max<size_t>(1, kPoolBytes / weight_bytes);
    DeviceBuffer weights(copies * weight_bytes), x(size_t(pairs) * sh.k * 2), y(size_t(pairs) * sh.n * 2),
        routing((pair_of_slot.size() + expert_of_tile.size() + 1) * 4);
    launch_fill_random(ElementType::kFloat16, weights.data(), static_cast<int64_t>(weights.bytes() / 2), -0.02f, 0.02f, 6, stream);
    launch_fill_random(ElementType::kFloat16, x.data(), pairs * sh.k, -1.f, 1.f, 7, stream);
    int32_t* slots = static_cast<int32_t*>(routing.data());
    int32_t* experts = slots + pair_of_slot.size();
    MC_CUDA_CHECK(cudaMemcpyAsync(slots, pair_of_slot.data(), pair_of_slot.size() * 4, cudaMemcpyHostToDevice, stream));
    MC_CUDA_CHECK(cudaMemcpyAsync(experts, expert_of_tile.data(), expert_of_tile.size() * 4, cudaMemcpyHostToDevice, stream));
    MC_CUDA_CHECK(cudaMemcpyAsync(experts + tiles, &tiles, 4, cudaMemcpyHostToDevice, stream));
    ExpertGemmArgs a;
    a.x = static_cast<const __half*>(x.data());
    a.y = static_cast<__half*>(y.data());
    a.n = sh.n;
    a.k = sh.k;
    a.shape = {pairs, sh.touched, 1, tile};
    a.routing.pair_of_slot = slots;
    a.routing.expert_of_tile = experts;
    a.routing.tiles_used = experts + tiles;
    const double flops = expert_product_flops(sh.touched, sh.rows, sh.n, sh.k, sms);
    const int calls = flops > 2e11 ? 10 : flops > 2e10 ? 30 : 100;
    const double us = graph_us_per_call(stream, calls, [&](int i) {
      a.weights = static_cast<const __half*>(weights.data()) + (i % copies) * (weight_bytes / 2);
      launch_expert_gemm(a, stream);
    });
    LibraryKernelSample smp = sample("expert_gemm", fmt::format("{} experts x {} pairs N={} K={}", sh.touched, sh.rows, sh.n, sh.k),
                                     fmt::format("modelcost grouped expert GEMM, tiles of {}", tile),
                                     double(weight_bytes) + 2.0 * pairs * (sh.k + sh.n), us);
    smp.flops = flops;
    smp.k = sh.k;
    out.push_back(smp);
  }
}

// The routing of `rows` rows to `top_k` of `experts` experts: top-k over the router's scores, then
// the pairs sorted by expert (one block), as the step runs them back to back. The one block's
// passes over the pairs outweigh the scores' traffic: the work is counted as kRoutingBytesPerPair
// per pair (expert_routing_bytes), and the curve's "bandwidth" is the block's pace.
void expert_routing(cudaStream_t stream, std::vector<LibraryKernelSample>& out) {
  struct Shape {
    int rows, experts, top_k;
  };
  const Shape shapes[] = {{1, 8, 2},     {8, 60, 4},     {32, 128, 8},  {256, 64, 6},   {1024, 8, 2},
                          {2048, 60, 4}, {4096, 128, 8}, {16384, 8, 2}, {16384, 64, 4}, {8192, 256, 8}};
  for (const Shape& sh : shapes) {
    const ExpertRoutingShape shape{sh.rows, sh.experts, sh.top_k, expert_tile_rows(double(sh.rows) * sh.top_k / sh.experts)};
    DeviceBuffer scores(size_t(sh.rows) * sh.experts * 2),
        buffers(size_t(shape.pairs()) * 8 + size_t(shape.slots()) * 4 + size_t(shape.tiles()) * 4 + 256);
    launch_fill_random(ElementType::kFloat16, scores.data(), int64_t(sh.rows) * sh.experts, -1.f, 1.f, 3, stream);
    ExpertRouting r;
    r.expert_of_pair = static_cast<int32_t*>(buffers.data());
    r.weight_of_pair = reinterpret_cast<float*>(r.expert_of_pair + shape.pairs());
    r.pair_of_slot = reinterpret_cast<int32_t*>(r.weight_of_pair + shape.pairs());
    r.expert_of_tile = r.pair_of_slot + shape.slots();
    r.tiles_used = r.expert_of_tile + shape.tiles();
    const double us = graph_us_per_call(stream, 50, [&](int) {
      launch_top_k_routing(static_cast<const __half*>(scores.data()), sh.experts, shape, r, stream);
      launch_expert_sort(shape, r, stream);
    });
    LibraryKernelSample x = sample("expert_routing", fmt::format("{} rows: top {} of {} experts", sh.rows, sh.top_k, sh.experts),
                                   "modelcost top-k + sort by expert", expert_routing_bytes(double(shape.pairs())), us);
    x.kernels = 2;
    out.push_back(x);
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
    AttentionShape sh = causal_prefill_shape(s.batch, s.heads, s.kv_heads, s.head_dim, s.tokens, s.past);
    sh.scale = 0.125f;  // the grid's scale since its first calibration (the kernel's time does not depend on it)
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
  expert_products(stream, sms, r.library_kernels);
  expert_routing(stream, r.library_kernels);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  r.notes.push_back("LLM step kernels: products at batch 1 and 32 (skinny kernel or cuBLASLt, as the step picks), the experts' grouped product, flash-decoding, causal prefill attention, RMSNorm "
                    "and row kernels on generic shapes, CUDA graphs of back-to-back calls cycling through more weights "
                    "or cache than the L2 holds");
}

}  // namespace modelcost::cuda
