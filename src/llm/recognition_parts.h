// The parts of decoder recognition, each reading one thing off the graph (decoder_recognition.cpp
// puts them together).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "llm/graph_index.h"
#include "modelcost/llm.h"

namespace modelcost {

struct TokenInput {
  int input = -1;            // graph tensor id of the token ids
  int table = -1;            // the embedding table it indexes
  int64_t vocab = 0, hidden = 0;
  int embedding_output = -1;
};
// The integer [batch, sequence] input that indexes an embedding table (through Reshape, Cast, ...).
std::optional<TokenInput> find_token_input(const GraphIndex& index);

struct AttentionBlocks {
  int64_t count = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  std::string form;
  std::string kv_how;  // how kv_heads was found
};
// Softmax feeding a MatMul (exported attention) or an attention op; heads of the most common block.
AttentionBlocks find_attention(const GraphIndex& index);

// past_key_values.* / past_* inputs of rank 4 ([batch, kv_heads, past, head_dim]) or 5 (key and
// value stacked in front), with the present.* output of the same layer.
struct CacheInputs {
  std::vector<KvCacheTensor> tensors;
  int64_t layers = 0;       // key/value pairs
  int64_t kv_heads = 0, head_dim = 0;
  int32_t dtype = 0;
  std::string past_symbol;
  int64_t fixed_past = 0;
};
CacheInputs find_cache(const GraphIndex& index);

// Every matrix product with a stored weight, the bytes of those weights, and the float
// initializers outside them. `tokens`/`batch`: rows of a per-position and a last-position GEMM.
void collect_weight_gemms(const GraphIndex& index, int64_t vocab, int64_t tokens, int64_t batch, DecoderModel& model);

// The MLP's width and form from the first layer's weight GEMMs (DecoderModel::mlp_intermediate).
void read_mlp_shape(DecoderModel& model);

// Rows of the position table (learned position embeddings, rotary cos/sin caches); 0 when none.
int64_t position_table_rows(const GraphIndex& index, const TokenInput& token);
bool has_rotary(const GraphIndex& index);

}  // namespace modelcost
