// One GPU's share of a deployed serving step (step_rank.cpp): its weights (column-parallel QKV
// and gate/up, row-parallel output and down projections, a vocabulary slice of the LM head), its KV
// caches filled with random data, the activation buffers, and the step's launch sequence over the
// rows of every sequence's new tokens (the decodes' one each, the prefill chunks'): per layer
// RMSNorm, QKV product, rotary + cache append, attention (causal flash attention for the prefill
// chunks, flash-decoding for the decodes; or multi-head latent attention, latent_attention.h),
// output product with the residual add in its epilogue,
// RMSNorm, gate/up product, SiLU*mul, down product (residual in the epilogue) or the experts of a
// mixture-of-experts layer (expert_mlp.h), with an NCCL
// all-reduce after each row-parallel product; then each sequence's last position, the final norm
// and the LM head (its slices gathered).
#pragma once
#include <cublasLt.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/device_buffer.h"
#include "llm/expert_mlp.h"
#include "llm/latent_attention.h"
#include "llm/step_gemm.h"
#include "llm/flash_decoding.h"
#include "modelcost/measure.h"

namespace modelcost::cuda {

// The per-device sizes of the step.
struct RankShape {
  int64_t batch = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  int64_t prefills = 0, prefill_tokens = 0, prefill_past = 0;
  int64_t dense_layers = 0;  // the layers before the experts' (all of them without experts)
  int64_t value_width = 0;   // per head, of the attention's output: head_dim, or MLA's value width
  bool latent = false;       // multi-head latent attention (latent_attention.h) instead of QKV + attention
  int64_t qkv_width() const { return latent ? 0 : (heads + 2 * kv_heads) * head_dim; }
  int64_t attention_width() const { return heads * value_width; }
  int64_t prefill_rows() const { return prefills * prefill_tokens; }
  int64_t rows() const { return prefill_rows() + batch; }        // the step's new tokens
  int64_t output_rows() const { return prefills + batch; }       // one logits row per sequence
  int64_t prefill_cache_len() const { return prefill_past + prefill_tokens; }
  LatentAttentionShape latent_shape(const ServingStepSpec& spec) const {
    LatentWidths w{static_cast<int>(heads), static_cast<int>(spec.kv_lora_rank), static_cast<int>(spec.rope_head_dim),
                   static_cast<int>(spec.nope_head_dim), static_cast<int>(spec.v_head_dim)};
    return {w, spec.layers, hidden, spec.q_lora_rank, batch, spec.context, prefills, prefill_tokens, prefill_past};
  }
  ExpertMlpShape experts_shape(const ServingStepSpec& spec, int rank) const {
    const int64_t tp = spec.tensor_parallel;
    return {spec.layers - dense_layers, rows(), hidden, spec.experts, spec.experts_per_token,
            spec.expert_width / tp, spec.shared_expert_width / tp, rank == 0};
  }
};
// Throws Error(kExitRuntime) when the spec cannot be split or run (odd widths, head_dim, TP).
RankShape rank_shape(const ServingStepSpec& spec);

class StepRank {
 public:
  // On the current device; `comm` is null on one GPU.
  StepRank(const ServingStepSpec& spec, int rank, ncclComm_t comm, cudaStream_t stream);
  ~StepRank();
  StepRank(const StepRank&) = delete;
  StepRank& operator=(const StepRank&) = delete;

  // Picks the fastest cuBLASLt candidate of each product (before capture).
  void autotune();
  // The whole step on `stream_`. While the stream captures, each op's kernel nodes are labelled
  // with its role (kernel_roles).
  void enqueue() const;
  std::string description() const;
  // The step's collectives of `role` (all-reduce or logits gather) alone, as many as the step runs,
  // on the same buffers: their own time, without the step's work between them.
  void enqueue_collectives(const std::string& role) const;
  // The roles of the captured graph's kernels in launch order: (role, kernel nodes) per op.
  const std::vector<std::pair<std::string, int>>& kernel_roles() const { return roles_; }

 private:
  struct LayerWeights {
    const __half *qkv, *out, *gate_up, *down, *norm1, *norm2;
  };
  void allocate();
  // A [layer][k|v][sequences, kv_heads, positions, head_dim] cache of random data (nothing when empty).
  void fill_cache(DeviceBuffer& cache, int64_t positions, int seed);
  void upload(DeviceBuffer& buffer, const std::vector<int32_t>& values) const;
  void make_gemms();
  void enqueue_layer(int layer) const;
  void enqueue_attention(int layer) const;
  void enqueue_last_positions() const;
  void all_reduce(__half* data, int64_t count) const;
  void mark(const char* role) const;

  ServingStepSpec spec_;
  RankShape s_;
  int rank_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  cublasLtHandle_t lt_ = nullptr;
  FlashDecodingShape attention_;
  FlashDecodingSplit split_;
  DeviceBuffer weights_, cache_, prefill_cache_, activations_, workspace_, attention_workspace_, ids_, last_ids_;
  std::vector<LayerWeights> layers_;
  const __half *embedding_ = nullptr, *final_norm_ = nullptr, *lm_head_ = nullptr;
  __half *residual_, *normed_, *qkv_, *q_, *attn_, *gate_up_, *act_, *last_, *logits_, *logits_all_;
  std::unique_ptr<StepGemm> qkv_gemm_, out_gemm_, gate_up_gemm_, down_gemm_, lm_gemm_;
  std::unique_ptr<ExpertMlp> experts_;  // the MoE layers' MLP, after the dense layers
  std::unique_ptr<LatentAttention> latent_;  // MLA's attention, instead of the QKV product and attention
  mutable std::vector<std::pair<std::string, int>> roles_;
  mutable int64_t captured_nodes_ = 0;
};

}  // namespace modelcost::cuda
