// One GPU's share of a deployed decode step (decode_rank.cpp): its weights (column-parallel
// QKV and gate/up, row-parallel output and down projections, a vocabulary slice of the LM head),
// its KV cache filled with random data, the activation buffers, and the step's launch sequence:
// per layer RMSNorm, QKV product, rotary + cache append, flash-decoding attention, output product
// with the residual add in its epilogue, RMSNorm, gate/up product, SiLU*mul, down product (residual
// in the epilogue), with an NCCL all-reduce after each row-parallel product; then the final norm
// and the LM head (its slices gathered).
#pragma once
#include <cublasLt.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/device_buffer.h"
#include "llm/decode_gemm.h"
#include "llm/flash_decoding.h"
#include "modelcost/measure.h"

namespace modelcost::cuda {

// The per-device sizes of the step.
struct RankShape {
  int64_t batch = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
};
// Throws Error(kExitRuntime) when the spec cannot be split or run (odd widths, head_dim, TP).
RankShape rank_shape(const DecodeStepSpec& spec);

class DecodeRank {
 public:
  // On the current device; `comm` is null on one GPU.
  DecodeRank(const DecodeStepSpec& spec, int rank, ncclComm_t comm, cudaStream_t stream);
  ~DecodeRank();
  DecodeRank(const DecodeRank&) = delete;
  DecodeRank& operator=(const DecodeRank&) = delete;

  // Picks the fastest cuBLASLt candidate of each product (before capture).
  void autotune();
  // The whole step on `stream_`. While the stream captures, each op's kernel nodes are labelled
  // with its role (kernel_roles).
  void enqueue() const;
  std::string description() const;
  // The roles of the captured graph's kernels in launch order: (role, kernel nodes) per op.
  const std::vector<std::pair<std::string, int>>& kernel_roles() const { return roles_; }

 private:
  struct LayerWeights {
    const __half *qkv, *out, *gate_up, *down, *norm1, *norm2;
  };
  void allocate();
  void make_gemms();
  void enqueue_layer(int layer) const;
  void all_reduce(__half* data, int64_t count) const;
  void mark(const char* role) const;

  DecodeStepSpec spec_;
  RankShape s_;
  int rank_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  cublasLtHandle_t lt_ = nullptr;
  FlashDecodingShape attention_;
  FlashDecodingSplit split_;
  DeviceBuffer weights_, cache_, activations_, workspace_, attention_workspace_, ids_;
  std::vector<LayerWeights> layers_;
  const __half *embedding_ = nullptr, *final_norm_ = nullptr, *lm_head_ = nullptr;
  __half *residual_, *normed_, *qkv_, *q_, *attn_, *gate_up_, *act_, *logits_, *logits_all_;
  std::unique_ptr<DecodeGemm> qkv_gemm_, out_gemm_, gate_up_gemm_, down_gemm_, lm_gemm_;
  mutable std::vector<std::pair<std::string, int>> roles_;
  mutable int64_t captured_nodes_ = 0;
};

}  // namespace modelcost::cuda
