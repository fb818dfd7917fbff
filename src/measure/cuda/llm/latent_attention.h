// One GPU's multi-head latent attention (DeepSeek-V2/V3's MLA) in the deployed step
// (latent_attention.cpp), for every layer, as vLLM serves it. From the normed rows: one product
// gives the queries (or their low-rank input, normed, then a second product) and the latent with
// its rotary key; the latent is normed and appended to the cache with its key rotated. The prefill
// chunks up-project their sequences' cached latents to keys and values and run causal flash
// attention (queries and keys nope + rope wide, values narrower). The decodes stay in the latent:
// their queries are taken into it per head (the key up-projection absorbed), attend over the
// cache every head shares, and their outputs are taken out of it (the value up-projection
// absorbed). Writes the heads' outputs [rows, heads * value] for the output product.
#pragma once
#include <cublasLt.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "llm/latent_decoding.h"
#include "llm/latent_kernels.h"
#include "llm/step_gemm.h"

namespace modelcost::cuda {

struct LatentAttentionShape {
  LatentWidths w;  // heads per device
  int64_t layers = 0, hidden = 0, q_lora = 0;
  int64_t decodes = 0, context = 1;                  // sequences decoding one token at `context`
  int64_t prefills = 0, chunk = 0, past = 0;         // prefill chunks of `chunk` tokens after `past`
  int64_t prefill_rows() const { return prefills * chunk; }
  int64_t rows() const { return prefill_rows() + decodes; }
  int64_t keys() const { return past + chunk; }       // a prefill chunk's cached positions
  int64_t first_width() const { return (q_lora > 0 ? q_lora : int64_t(w.heads) * w.qk()) + w.cache_row(); }
};
// Throws Error(kExitRuntime) naming what the kernels cannot take.
void check_latent_shape(const LatentAttentionShape& shape);

class LatentAttention {
 public:
  using Mark = std::function<void(const char* role)>;
  // Random weights (one copy per layer) and caches, on `stream`.
  LatentAttention(const LatentAttentionShape& shape, cublasLtHandle_t lt, GemmWorkspace workspace, int seed, cudaStream_t stream);
  LatentAttention(const LatentAttention&) = delete;
  LatentAttention& operator=(const LatentAttention&) = delete;

  // Picks each product's library algorithm (before capture); `out` as enqueue's.
  void autotune(const __half* normed, __half* out, cudaStream_t stream);
  // Layer `layer`: normed [rows, hidden] in, the heads' outputs [rows, heads * value] to `out`.
  void enqueue(int layer, const __half* normed, __half* out, const Mark& mark, cudaStream_t stream) const;
  std::string description() const;

 private:
  struct LayerWeights {
    const __half *first, *q_norm, *q_up, *kv_norm, *kv_up, *absorb_q, *absorb_v;
  };
  struct Buffers {
    __half *first, *q_normed, *q, *q_heads, *q_latent, *o_latent, *up, *k, *v;
  };
  void allocate(int seed, cudaStream_t stream);
  void make_gemms(cublasLtHandle_t lt, GemmWorkspace workspace);
  const __half* queries() const;  // the rows' queries: in the first product's rows, or the second's
  int64_t queries_ld() const;
  void enqueue_prefill(int layer, __half* out, const Mark& mark, cudaStream_t stream) const;
  void enqueue_decode(int layer, __half* out, const Mark& mark, cudaStream_t stream) const;
  __half* cache(int layer, bool prefill) const;

  LatentAttentionShape s_;
  LatentDecodingShape decoding_;
  LatentDecodingSplit split_;
  DeviceBuffer weights_, cache_, prefill_cache_, activations_, decoding_workspace_;
  std::vector<LayerWeights> layers_;
  Buffers b_{};
  std::unique_ptr<StepGemm> first_gemm_, q_up_gemm_, kv_up_gemm_, absorb_gemm_, value_gemm_;
};

}  // namespace modelcost::cuda
