// Reads a decoder LLM's structure off its shaped graph (docs/llm.md, "Recognition").
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "llm/recognition_parts.h"
#include "modelcost/errors.h"
#include "modelcost/fusion.h"
#include "modelcost/roofline.h"

namespace modelcost {
namespace {

[[noreturn]] void not_a_decoder(const std::string& what) {
  throw Error(kExitInvalidModel, "not a decoder LLM: " + what);
}

std::string attention_kind(int64_t heads, int64_t kv_heads) {
  if (kv_heads == heads) return "MHA";
  return kv_heads == 1 ? "MQA" : "GQA";
}

void read_token_dims(const TensorInfo& token, const CacheInputs& cache, DecoderModel& m) {
  m.batch_symbol = declared_symbol(token, 0);
  m.sequence_symbol = declared_symbol(token, 1);
  m.fixed_batch = declared_value(token, 0);
  m.fixed_sequence = declared_value(token, 1);
  m.past_symbol = cache.past_symbol;
  m.fixed_past = cache.fixed_past;
}

void read_cache(const CacheInputs& cache, const AttentionBlocks& attention, DecoderModel& m) {
  if (cache.tensors.empty()) return;
  m.kv_cache = cache.tensors;
  m.kv_dtype = peak_dtype_of(cache.dtype);
  if (cache.kv_heads != m.kv_heads || cache.head_dim != m.head_dim)
    m.how.push_back(fmt::format("the cache inputs ({} kv heads of {}) override the attention blocks' {} of {}",
                                cache.kv_heads, cache.head_dim, m.kv_heads, m.head_dim));
  m.kv_heads = cache.kv_heads;
  m.head_dim = cache.head_dim;
  m.how.push_back(fmt::format("KV cache: {} inputs like '{}' [batch, {}, past, {}], {} (outputs like '{}')",
                              cache.tensors.size(), cache.tensors.front().past, cache.kv_heads, cache.head_dim,
                              m.kv_dtype, cache.tensors.front().present.empty() ? "none" : cache.tensors.front().present));
  if (cache.layers != attention.count)
    m.how.push_back(fmt::format("{} cache layers but {} attention blocks: the cache's count is used", cache.layers,
                                attention.count));
  m.layers = cache.layers;
}

// Kernels of the deployed view (fused groups that launch) and the bytes per token of the ones
// that are neither a GEMM nor attention. A serving runtime fuses every pattern (norms with their
// prologue, rotary), so the plan is the fully fused one.
void read_deployed_view(const Analysis& analysis, double tokens, DecoderModel& m) {
  const FusionPlan plan = fuse(analysis, FusionReach::kEveryPattern);
  double elementwise = 0;
  for (const FusedGroup& g : plan.groups)
    if (g.launches && !g.matrix && g.pattern != "attention") elementwise += g.bytes();
  m.deployed_kernels = static_cast<double>(plan.kernels());
  m.elementwise_bytes_per_token = tokens > 0 ? elementwise / tokens : 0;
  m.how.push_back(fmt::format("deployed view: {} kernels per step; its elementwise kernels move {:.0f} bytes per token",
                              plan.kernels(), m.elementwise_bytes_per_token));
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> probe_dims(const Model& model, const RecognitionProbe& probe) {
  const Graph& g = model.graph;
  std::vector<std::pair<std::string, int64_t>> dims;
  auto put = [&dims](const std::string& symbol, int64_t value) {
    if (symbol.empty()) return;
    for (const auto& d : dims)
      if (d.first == symbol) return;
    dims.emplace_back(symbol, value);
  };
  bool has_past = false;
  for (int id : g.inputs)
    if (lowercase(g.tensors[id].name).find("past") != std::string::npos) has_past = true;
  for (int id : g.inputs) {
    const TensorInfo& t = g.tensors[id];
    const std::string name = lowercase(t.name);
    const auto* shape = declared_shape(t);
    if (!shape) continue;
    const bool stacked = shape->dim_size() == 5 && name.find("past") != std::string::npos;
    if (name.find("past") != std::string::npos && (shape->dim_size() == 4 || stacked)) {
      put(declared_symbol(t, stacked ? 1 : 0), 1);
      put(declared_symbol(t, stacked ? 3 : 2), probe.past);
    } else if (name.find("mask") != std::string::npos && shape->dim_size() == 2) {
      put(declared_symbol(t, 0), 1);
      put(declared_symbol(t, 1), probe.sequence + (has_past ? probe.past : 0));
    } else if (const int32_t type = declared_dtype(t);
               (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32) && shape->dim_size() == 2) {
      put(declared_symbol(t, 0), 1);
      put(declared_symbol(t, 1), probe.sequence);
    }
  }
  return dims;
}

DecoderModel recognise_decoder(const Analysis& analysis) {
  if (!analysis.graph) not_a_decoder("no model");
  const GraphIndex index(*analysis.graph);
  DecoderModel m;
  const std::optional<TokenInput> token = find_token_input(index);
  if (!token)
    not_a_decoder("no token input was found (an integer [batch, sequence] input that indexes an embedding table)");
  const TensorInfo& ids = index.tensor(token->input);
  m.token_input = ids.name;
  m.vocab = token->vocab;
  m.hidden = token->hidden;
  m.act_dtype = peak_dtype_of(index.tensor(token->table).dtype);
  m.how.push_back(fmt::format("token input '{}' indexes the embedding table '{}' [{}, {}] ({})", ids.name,
                              index.tensor(token->table).name, m.vocab, m.hidden, m.act_dtype));

  const AttentionBlocks attention = find_attention(index);
  if (attention.count == 0) not_a_decoder("no attention blocks were found (a Softmax feeding a MatMul, or an attention op)");
  if (attention.heads <= 0 || attention.head_dim <= 0) not_a_decoder("the attention blocks' head count was not found");
  m.layers = attention.count;
  m.heads = attention.heads;
  m.kv_heads = attention.kv_heads;
  m.head_dim = attention.head_dim;
  m.attention_form = attention.form;
  m.how.push_back(fmt::format("{} attention blocks ({}): {} query heads of {}", attention.count, attention.form,
                              m.heads, m.head_dim));
  if (m.kv_heads > 0) m.how.push_back(fmt::format("{} kv heads: {}", m.kv_heads, attention.kv_how));

  const CacheInputs cache = find_cache(index);
  read_token_dims(ids, cache, m);
  read_cache(cache, attention, m);
  if (m.kv_heads <= 0) not_a_decoder("the key/value head count was not found (no cache input, no value projection)");
  if (m.heads % m.kv_heads != 0)
    not_a_decoder(fmt::format("{} query heads are not a multiple of {} kv heads", m.heads, m.kv_heads));
  m.attention = attention_kind(m.heads, m.kv_heads);
  if (m.kv_dtype.empty()) m.kv_dtype = m.act_dtype;

  const int64_t batch = ids.shape[0];
  const int64_t tokens = ids.shape[0] * ids.shape[1];
  collect_weight_gemms(index, m.vocab, tokens, batch, m);
  const WeightGemm* head = nullptr;
  for (const WeightGemm& g : m.gemms)
    if (g.lm_head) head = &g;
  if (!head) not_a_decoder(fmt::format("no LM head was found (a weight GEMM whose output is the vocabulary, N = {})", m.vocab));
  m.logits_every_position = head->per_position || ids.shape[1] == 1;
  m.how.push_back(fmt::format("{} weight GEMMs ({} per layer and the LM head '{}'); logits for {}", m.gemms.size(),
                              m.layers > 0 ? static_cast<double>(m.gemms.size() - 1) / m.layers : 0.0, head->node,
                              m.logits_every_position ? "every position" : "the last position"));
  read_deployed_view(analysis, static_cast<double>(tokens), m);
  read_mlp_shape(m);
  m.rotary = has_rotary(index);
  m.max_positions = position_table_rows(index, *token);
  if (m.kv_cache.empty()) {
    m.decode_derived = true;
    m.how.push_back("no KV cache in the graph: the decode step is derived from it (each weight GEMM once per new token, "
                    "attention over the context reading a cache of 2 x layers x kv_heads x head_dim per token)");
  }
  return m;
}

}  // namespace modelcost
