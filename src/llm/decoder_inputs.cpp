// The token input, the KV-cache inputs and outputs, and the position table of a decoder graph.
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "llm/recognition_parts.h"

namespace modelcost {
namespace {

bool is_integer(int32_t dtype) {
  return dtype == onnx::TensorProto::INT64 || dtype == onnx::TensorProto::INT32;
}

// A Gather of a float [rows, width] initializer reached from `id` through view ops.
const Node* embedding_gather(const GraphIndex& index, int id, int depth = 0) {
  if (depth > 4) return nullptr;
  for (const Node* c : index.consumers(id)) {
    if ((c->op_type == "Gather" || c->op_type == "GatherBlockQuantized") && c->inputs.size() >= 2 && c->inputs[1] == id) {
      const TensorInfo& table = index.tensor(c->inputs[0]);
      if (table.is_initializer && table.has_shape && table.shape.size() == 2) return c;
    }
    if (is_layout_op(*c) && !c->outputs.empty())
      if (const Node* g = embedding_gather(index, c->outputs[0], depth + 1)) return g;
  }
  return nullptr;
}

std::string present_name(const std::string& past) {
  for (const char* from : {"past_key_values", "past"}) {
    const size_t at = past.find(from);
    if (at != std::string::npos) return past.substr(0, at) + "present" + past.substr(at + std::string(from).size());
  }
  return "";
}

}  // namespace

std::optional<TokenInput> find_token_input(const GraphIndex& index) {
  const Graph& g = index.graph();
  std::optional<TokenInput> found;
  for (int id : g.inputs) {
    const TensorInfo& t = g.tensors[id];
    if (!is_integer(t.dtype) || !t.has_shape || t.shape.size() != 2) continue;
    const Node* gather = embedding_gather(index, id);
    if (!gather) continue;
    TokenInput token;
    token.input = id;
    token.table = gather->inputs[0];
    token.vocab = index.tensor(token.table).shape[0];
    token.hidden = index.tensor(token.table).shape[1];
    token.embedding_output = gather->outputs.empty() ? -1 : gather->outputs[0];
    // Position ids also index a table (learned positions): the larger table is the vocabulary.
    if (!found || token.vocab > found->vocab) found = token;
  }
  return found;
}

CacheInputs find_cache(const GraphIndex& index) {
  const Graph& g = index.graph();
  CacheInputs cache;
  for (int id : g.inputs) {
    const TensorInfo& t = g.tensors[id];
    const std::string name = lowercase(t.name);
    if (name.find("past") == std::string::npos || !t.has_shape) continue;
    // [batch, kv_heads, past, head_dim], or [2, batch, kv_heads, past, head_dim] (key and value stacked).
    const bool stacked = t.shape.size() == 5 && t.shape[0] == 2;
    if (t.shape.size() != 4 && !stacked) continue;
    const int offset = stacked ? 1 : 0;
    KvCacheTensor kv;
    kv.past = t.name;
    const std::string present = present_name(t.name);
    for (int out : g.outputs)
      if (g.tensors[out].name == present) kv.present = present;
    cache.tensors.push_back(kv);
    cache.layers += stacked ? 2 : 1;
    cache.kv_heads = t.shape[1 + offset];
    cache.head_dim = t.shape[3 + offset];
    cache.dtype = t.dtype;
    if (cache.past_symbol.empty()) cache.past_symbol = declared_symbol(t, 2 + offset);
    if (cache.fixed_past == 0) cache.fixed_past = declared_value(t, 2 + offset);
  }
  cache.layers /= 2;  // one key and one value tensor per layer
  return cache;
}

int64_t position_table_rows(const GraphIndex& index, const TokenInput& token) {
  const Graph& g = index.graph();
  int64_t rows = 0;
  for (const Node& node : g.nodes) {
    // A learned position table: a second Gather of a [positions, hidden] initializer.
    if (node.op_type == "Gather" && node.inputs.size() >= 2 && node.inputs[0] != token.table) {
      const TensorInfo& table = index.tensor(node.inputs[0]);
      if (table.is_initializer && table.has_shape && table.shape.size() == 2 && table.shape[1] == token.hidden)
        rows = std::max(rows, table.shape[0]);
    }
    // Rotary caches given to the attention op: cos_cache [max_positions, rotary_dim / 2].
    if (node.op_type == "GroupQueryAttention" && node.inputs.size() > 7 && node.inputs[7] >= 0) {
      const TensorInfo& cos = index.tensor(node.inputs[7]);
      if (cos.has_shape && cos.shape.size() == 2) rows = std::max(rows, cos.shape[0]);
    }
  }
  return rows;
}

bool has_rotary(const GraphIndex& index) {
  bool sin = false, cos = false;
  for (const Node& node : index.graph().nodes) {
    if (node.op_type == "RotaryEmbedding") return true;
    if (node.op_type == "GroupQueryAttention" && node_int_attr(node, "do_rotary", 0) != 0) return true;
    sin = sin || node.op_type == "Sin";
    cos = cos || node.op_type == "Cos";
  }
  for (const TensorInfo& t : index.graph().tensors)
    if (t.is_initializer) {
      const std::string name = lowercase(t.name);
      if (name.find("cos_cache") != std::string::npos || name.find("cos_cached") != std::string::npos) cos = sin = true;
    }
  return sin && cos;
}

}  // namespace modelcost
