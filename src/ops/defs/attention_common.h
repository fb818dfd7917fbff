// The cost of an attention block, shared by the attention family and QAttention (quantization),
// and the head arithmetic the attention and rotary embedding rules share.
#pragma once
#include "ops/defs/fused_helpers.h"

namespace modelcost {

// What one attention op computes. Products run over the full q_len x kv_len score matrix, also
// under a causal or windowed mask (docs/ops/attention.md says why).
struct AttentionWork {
  double batch = 1, heads = 1;       // heads: query heads
  double q_len = 1, kv_len = 1;      // kv_len: keys attended to (past + new)
  double head_size = 0, v_head_size = 0;
  double projection_macs = 0;        // Q/K/V input projections the op itself performs
  double projection_flops = 0;       // elementwise work on the projections (bias adds, dequantization)
  bool mask = false;                 // a mask or an additive bias is added to the scores
  bool softcap = false;              // scores pass through softcap * tanh(scores / softcap)
  double rotary_elements = 0;        // query and key elements rotated by a fused rotary embedding
  bool estimate = false;
};

// The score geometry every attention op starts from: batch x heads x q_len x kv_len scores,
// keys of head_size and values of v_head_size; the rest of the work stays zero / false.
AttentionWork attention_work(int64_t batch, int64_t heads, int64_t q_len, int64_t kv_len, int64_t head_size,
                             int64_t v_head_size);

// macs = projection + 2 products (Q.K^T, P.V); flops = 2 macs + projection work + scaling,
// mask, softcap and softmax per score + rotary.
OpCost attention_cost(const AttentionWork& w);

// hidden / heads, failing (naming `what`) when it does not divide.
int64_t per_head(const OpContext& c, int64_t hidden, int64_t heads, const char* what);

// Fraction of each head rotated: rotary_embedding_dim, else twice the cos cache's last dim (input
// `cos_input`, when present), else the whole head.
double rotary_fraction(const OpContext& c, size_t cos_input, int64_t head_size);

}  // namespace modelcost
