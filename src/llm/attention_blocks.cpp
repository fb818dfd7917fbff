// Attention blocks of a decoder graph: exported as Softmax -> MatMul (scores times values), or as
// one attention op (GroupQueryAttention, MultiHeadAttention, Attention).
#include <map>

#include "llm/recognition_parts.h"
#include "ops/op_registry.h"

namespace modelcost {
namespace {

struct Block {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  std::string form, kv_how;
};

const Node* skip_to_matmul(const GraphIndex& index, const Node& softmax) {
  int id = softmax.outputs.empty() ? -1 : softmax.outputs[0];
  for (int step = 0; step < 4 && id >= 0; ++step) {
    const Node* next = nullptr;
    for (const Node* c : index.consumers(id)) {
      if (c->op_type == "MatMul" && !c->inputs.empty() && c->inputs[0] == id) return c;
      // Probabilities handed on unchanged (Identity, Dropout, Cast) or masked (Where).
      const OpTraits t = op_traits(c->domain, c->op_type);
      if (t.view || t.conversion || c->op_type == "Where") next = c;
    }
    id = next && !next->outputs.empty() ? next->outputs[0] : -1;
  }
  return nullptr;
}

// Walks from the value tensor entering scores x V back through layout ops (repeat_kv's Expand,
// the head Reshape/Transpose, the cache Concat) to the projection that made it: its width over
// head_dim is the KV head count.
int64_t kv_heads_from_value(const GraphIndex& index, int id, int64_t head_dim, std::string& how) {
  for (int step = 0; step < 64 && id >= 0; ++step) {
    const TensorInfo& t = index.tensor(id);
    const Node* p = index.producer(id);
    const bool layout = p && (is_layout_op(*p) || p->op_type == "Concat");
    if (!p || !layout) {
      if (!t.has_shape || t.shape.empty()) return 0;
      if (t.shape.size() == 4 && t.shape[3] == head_dim) {
        how = "the value tensor '" + t.name + "' " + shape_to_string(t.shape) + " has " + std::to_string(t.shape[1]) + " heads";
        return t.shape[1];
      }
      const int64_t width = t.shape.back();
      if (head_dim <= 0 || width % head_dim != 0) return 0;
      how = "the value projection '" + t.name + "' is " + std::to_string(width) + " wide: " +
            std::to_string(width / head_dim) + " heads of " + std::to_string(head_dim);
      return width / head_dim;
    }
    int next = p->inputs.empty() ? -1 : p->inputs[0];
    if (p->op_type == "Concat")  // the cache concat: follow the newly computed part
      for (int in : p->inputs)
        if (in >= 0 && index.producer(in)) next = in;
    id = next;
  }
  return 0;
}

std::optional<Block> exported_block(const GraphIndex& index, const Node& softmax) {
  if (softmax.inputs.empty() || softmax.inputs[0] < 0) return std::nullopt;
  const TensorInfo& scores = index.tensor(softmax.inputs[0]);
  if (!scores.has_shape || scores.shape.size() != 4) return std::nullopt;
  const Node* pv = skip_to_matmul(index, softmax);
  if (!pv || pv->outputs.empty() || pv->inputs.size() < 2) return std::nullopt;
  const TensorInfo& out = index.tensor(pv->outputs[0]);
  if (!out.has_shape || out.shape.size() != 4) return std::nullopt;
  Block b;
  b.heads = scores.shape[1];
  b.head_dim = out.shape[3];
  b.form = "Softmax + MatMul";
  b.kv_heads = kv_heads_from_value(index, pv->inputs[1], b.head_dim, b.kv_how);
  return b;
}

std::optional<Block> fused_block(const GraphIndex& index, const Node& node) {
  if (op_traits(node.domain, node.op_type).form != OpForm::kAttention || node.outputs.empty() || node.outputs[0] < 0)
    return std::nullopt;
  const bool standard = node.domain.empty() || node.domain == "ai.onnx";
  Block b;
  b.form = node.op_type;
  b.heads = node_int_attr(node, standard ? "q_num_heads" : "num_heads", 0);
  b.kv_heads = node_int_attr(node, "kv_num_heads", 0);
  const TensorInfo& out = index.tensor(node.outputs[0]);
  if (!out.has_shape || out.shape.empty()) return std::nullopt;
  if (out.shape.size() == 4) {  // [batch, heads, sequence, head_dim]
    b.heads = b.heads > 0 ? b.heads : out.shape[1];
    b.head_dim = out.shape[3];
  } else if (b.heads > 0) {
    b.head_dim = out.shape.back() / b.heads;
  }
  if (b.kv_heads <= 0) b.kv_heads = b.heads;
  b.kv_how = "the " + node.op_type + " attributes";
  if (b.heads <= 0 || b.head_dim <= 0) return std::nullopt;
  return b;
}

}  // namespace

AttentionBlocks find_attention(const GraphIndex& index) {
  std::vector<Block> blocks;
  for (const Node& node : index.graph().nodes) {
    std::optional<Block> b = node.op_type == "Softmax" ? exported_block(index, node) : fused_block(index, node);
    if (b) blocks.push_back(*b);
  }
  AttentionBlocks found;
  found.count = static_cast<int64_t>(blocks.size());
  if (blocks.empty()) return found;
  // The most common geometry describes the model (a stray softmax elsewhere does not).
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> votes;
  for (const Block& b : blocks) ++votes[{b.heads, b.kv_heads, b.head_dim}];
  auto best = votes.begin();
  for (auto it = votes.begin(); it != votes.end(); ++it)
    if (it->second > best->second) best = it;
  std::tie(found.heads, found.kv_heads, found.head_dim) = best->first;
  for (const Block& b : blocks)
    if (std::tie(b.heads, b.kv_heads, b.head_dim) == best->first) {
      found.form = b.form;
      found.kv_how = b.kv_how;
      break;
    }
  found.count = best->second;
  return found;
}

}  // namespace modelcost
