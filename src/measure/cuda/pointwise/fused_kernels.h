// Host-side launchers of the fused kernels the deployed view runs (pointwise_chain.cu,
// flash_attention.cu). Every launcher enqueues on the given stream and checks the launch.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "core/kernels.h"
#include "modelcost/runtime_limits.h"
#include "ops/elementwise_ops.h"

namespace modelcost::cuda {

// A chain of elementwise ops evaluated per output element in registers: each step reads
// external inputs (through broadcast strides over the chain's dims) or earlier steps' values,
// and may store its value to an output. One kernel for what ran as one kernel per node.
// The limits are the kernel plan's (runtime_limits.h), so the plan never asks for a longer chain.
constexpr int kChainMaxRank = kChainLimits.rank, kChainMaxInputs = kChainLimits.inputs, kChainMaxSteps = kChainLimits.steps,
              kChainMaxOutputs = kChainLimits.outputs;

struct ChainStep {
  ElementwiseOp op = ElementwiseOp::kIdentity;
  // Operand k: >= 0 an external input, < 0 the value of step (-operand - 1).
  int8_t operand[3] = {0, 0, 0};
  float alpha = 0, beta = 0;
};

struct ChainProgram {
  int rank = 0;
  int64_t dims[kChainMaxRank] = {};
  int inputs = 0;
  const void* input[kChainMaxInputs] = {};
  ElementType input_type[kChainMaxInputs] = {};
  int64_t strides[kChainMaxInputs][kChainMaxRank] = {};
  int steps = 0;
  ChainStep step[kChainMaxSteps];
  int outputs = 0;
  void* output[kChainMaxOutputs] = {};
  ElementType output_type[kChainMaxOutputs] = {};
  int output_step[kChainMaxOutputs] = {};
  // Every input is either contiguous over the dims or one broadcast scalar: no index math.
  bool flat = false;
  int64_t flat_stride[kChainMaxInputs] = {};
  int64_t elements() const;
  void set_flat();  // sets `flat` from the strides
};

void launch_pointwise_chain(const ChainProgram& program, cudaStream_t stream);

// Scaled dot-product attention, O = softmax(scale * Q K^T + mask) V, in one kernel that keeps the
// scores on chip (online softmax over key tiles, tensor-core products): Q [bh, sq, d], K
// [bh / group, sk, d], V [bh / group, sk, dv] (group query heads share one key/value head),
// O [bh, sq, dv], fp16, d a multiple of 4 up to 128 (runtime_limits.h; up to 192 for the LLM
// step's MLA prefill), dv a multiple of 4 up to d. The mask (fp16, optional) is read at b * mask_b + h * mask_h + i * mask_i
// + j * mask_j, with b = bh / heads and h = bh % heads. Causal: key j > query i + causal_offset is
// masked (the offset: positions cached before a prefill chunk's first query). With token_major_out
// O is written [b, sq, heads, dv], the rows an output projection reads.
struct AttentionShape {
  int64_t bh = 1, heads = 1, sq = 0, sk = 0, d = 0, group = 1;
  int64_t dv = 0;  // the values' and output's width per head; 0: d (MLA: keys 192 wide, values 128)
  float scale = 1;
  bool causal = false;
  int64_t causal_offset = 0;
  bool token_major_out = false;
  const void* mask = nullptr;
  int64_t mask_b = 0, mask_h = 0, mask_i = 0, mask_j = 0;
};
void launch_flash_attention(const AttentionShape& shape, const void* q, const void* k, const void* v, void* o,
                            cudaStream_t stream);
// A prefill's causal attention as the LLM step runs it: `sequences` chunks of `tokens` new query
// rows, each after `past` cached positions, `heads` query heads grouped on `kv_heads`, scale
// 1 / sqrt(head_dim), O written token-major.
inline AttentionShape causal_prefill_shape(int64_t sequences, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                           int64_t tokens, int64_t past) {
  AttentionShape sh;
  sh.bh = sequences * heads;
  sh.heads = heads;
  sh.sq = tokens;
  sh.sk = past + tokens;
  sh.d = head_dim;
  sh.group = heads / kv_heads;
  sh.scale = 1.f / std::sqrt(static_cast<float>(head_dim));
  sh.causal = true;
  sh.causal_offset = past;
  sh.token_major_out = true;
  return sh;
}

}  // namespace modelcost::cuda
