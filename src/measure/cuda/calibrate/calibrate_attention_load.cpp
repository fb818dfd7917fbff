// achievable.attention_load_scale: how much longer the prefill's causal flash attention takes
// between compute-bound matrix products than replayed alone. A long prefill's products hold the
// GPU at its power limit, which lowers the SM clock (an H100 SXM read 1455-1650 MHz during a
// 2048-token Llama-3-8B prefill against 1980 MHz idle); the attention, bound by the SM's issue
// rate rather than by power, then runs slower than calibrate's grid timed it. Measured on one long
// prefill layer's shapes: CUDA graphs of rounds of three products and the attention, each
// attention timed by event nodes around it, against graphs of the attention alone timed the same
// way after an idle pause (differences of whole graphs would carry the products' own drift).
#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/kernels.h"
#include "llm/step_gemm.h"
#include "pointwise/fused_kernels.h"
#include "timing/captured_graph.h"

namespace modelcost::cuda {
namespace {

constexpr int kRounds = 8;            // products and attention per graph: ~8 ms, long enough to reach the power limit
constexpr int kProductsPerRound = 3;  // about a layer's product time per attention
constexpr int kReplays = 9;
constexpr int kLoadWarmups = 60;      // ~0.5 s of the loaded graph first: a cold GPU draws less power at the same clock

// Llama-3-8B's layer at a 2048-token prefill: its gate/up product and its attention.
constexpr int kTokens = 2048, kHidden = 4096, kProductWidth = 14336;
constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 128;

// Median time of the attention over kReplays replays (after `warmups` untimed ones) of a graph of
// kRounds rounds, each round `before` (maybe nothing) then the attention between two event nodes.
class TimedRounds {
 public:
  explicit TimedRounds(cudaStream_t stream) : stream_(stream), start_(kRounds), stop_(kRounds) {
    for (int i = 0; i < kRounds; ++i) {
      MC_CUDA_CHECK(cudaEventCreate(&start_[i]));
      MC_CUDA_CHECK(cudaEventCreate(&stop_[i]));
    }
  }
  ~TimedRounds() {
    for (int i = 0; i < kRounds; ++i) {
      cudaEventDestroy(start_[i]);
      cudaEventDestroy(stop_[i]);
    }
  }
  TimedRounds(const TimedRounds&) = delete;
  TimedRounds& operator=(const TimedRounds&) = delete;

  double median_us(const std::function<void()>& before, const std::function<void()>& attention, int warmups) {
    const CapturedGraph graph([&](cudaStream_t s) {
      for (int i = 0; i < kRounds; ++i) {
        before();
        MC_CUDA_CHECK(cudaEventRecordWithFlags(start_[i], s, cudaEventRecordExternal));
        attention();
        MC_CUDA_CHECK(cudaEventRecordWithFlags(stop_[i], s, cudaEventRecordExternal));
      }
    }, stream_);
    for (int w = 0; w < warmups; ++w) graph.launch(stream_);
    std::vector<float> ms;
    for (int r = 0; r < kReplays; ++r) {
      graph.launch(stream_);
      MC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      for (int i = 0; i < kRounds; ++i) {
        float t = 0;
        MC_CUDA_CHECK(cudaEventElapsedTime(&t, start_[i], stop_[i]));
        ms.push_back(t);
      }
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> start_, stop_;
};

}  // namespace

void calibrate_attention_load(cudaStream_t stream, CalibrationResult& r) {
  const AttentionShape sh = causal_prefill_shape(1, kHeads, kKvHeads, kHeadDim, kTokens, 0);
  const size_t q_elements = size_t(kHeads) * kTokens * kHeadDim, kv_elements = size_t(kKvHeads) * kTokens * kHeadDim;
  DeviceBuffer q(q_elements * 2), k(kv_elements * 2), v(kv_elements * 2), o(q_elements * 2);
  DeviceBuffer x(size_t(kTokens) * kHidden * 2), w(size_t(kProductWidth) * kHidden * 2), y(size_t(kTokens) * kProductWidth * 2);
  for (DeviceBuffer* b : {&q, &k, &v, &x, &w})
    launch_fill_random(ElementType::kFloat16, b->data(), static_cast<int64_t>(b->bytes() / 2), -1.f, 1.f, 31, stream);
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw Error(kExitRuntime, "cublasLtCreate failed");
  DeviceBuffer workspace(size_t(32) << 20);
  const auto* xs = static_cast<const __half*>(x.data());
  const auto* ws = static_cast<const __half*>(w.data());
  auto* ys = static_cast<__half*>(y.data());
  StepGemm product(lt, {kTokens, kProductWidth, kHidden, false}, {workspace.data(), workspace.bytes()});
  product.autotune(xs, {ws}, ys, stream);
  const auto attention = [&] { launch_flash_attention(sh, q.data(), k.data(), v.data(), o.data(), stream); };
  const auto products = [&] {
    for (int p = 0; p < kProductsPerRound; ++p) product.enqueue(xs, ws, ys, stream);
  };
  TimedRounds rounds(stream);
  const double loaded = rounds.median_us(products, attention, kLoadWarmups);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // back to the idle clock
  const double alone = rounds.median_us([] {}, attention, 1);
  cublasLtDestroy(lt);
  if (!(alone > 0)) return;
  r.attention_load_scale = std::clamp(loaded / alone, 1.0, 2.0);
  r.notes.push_back(fmt::format(
      "attention under load: causal flash attention B=1 heads={}/{} d={} tokens={}, {:.1f} us alone, {:.1f} us after "
      "{} products of {}x{}x{} (event nodes around each of {} in a graph, median over {} replays): x{:.2f}",
      kHeads, kKvHeads, kHeadDim, kTokens, alone, loaded, kProductsPerRound, kTokens, kProductWidth, kHidden, kRounds,
      kReplays, r.attention_load_scale));
}

}  // namespace modelcost::cuda
