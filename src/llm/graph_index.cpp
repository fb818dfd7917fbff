#include "llm/graph_index.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>

#include "ops/op_registry.h"

namespace modelcost {

GraphIndex::GraphIndex(const Graph& graph)
    : graph_(graph), producers_(graph.tensors.size(), nullptr), consumers_(graph.tensors.size()) {
  for (const Node& node : graph.nodes) {
    for (int id : node.outputs)
      if (id >= 0) producers_[id] = &node;
    for (int id : node.inputs)
      if (id >= 0) consumers_[id].push_back(&node);
  }
}

std::vector<int> GraphIndex::weight_sources(int id) const {
  std::vector<int> out;
  if (!collect_sources(id, 0, out)) return {};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool GraphIndex::collect_sources(int id, int depth, std::vector<int>& out) const {
  if (id < 0) return true;
  const TensorInfo& t = graph_.tensors[id];
  if (t.is_initializer) {
    out.push_back(id);
    return true;
  }
  const Node* p = producer(id);
  if (t.is_graph_input || !p || depth > 8) return false;
  if (p->op_type == "Constant") return true;  // a constant carries no stored weight of its own
  // A computed weight (dequantized, transposed, cast) is made only of initializers and constants.
  for (int in : p->inputs)
    if (!collect_sources(in, depth + 1, out)) return false;
  return true;
}

const onnx::TensorShapeProto* declared_shape(const TensorInfo& t) {
  if (!t.declared || !t.declared->has_tensor_type() || !t.declared->tensor_type().has_shape()) return nullptr;
  return &t.declared->tensor_type().shape();
}

std::string declared_symbol(const TensorInfo& t, int dim) {
  const auto* s = declared_shape(t);
  if (!s || dim >= s->dim_size() || !s->dim(dim).has_dim_param()) return "";
  return s->dim(dim).dim_param();
}

int64_t declared_value(const TensorInfo& t, int dim) {
  const auto* s = declared_shape(t);
  if (!s || dim >= s->dim_size() || !s->dim(dim).has_dim_value()) return 0;
  return s->dim(dim).dim_value();
}

int32_t declared_dtype(const TensorInfo& t) {
  if (t.declared && t.declared->has_tensor_type() && t.declared->tensor_type().elem_type() != 0)
    return t.declared->tensor_type().elem_type();
  return t.dtype;
}

int64_t node_int_attr(const Node& node, const char* name, int64_t fallback) {
  if (!node.proto) return fallback;
  for (const auto& a : node.proto->attribute())
    if (a.name() == name && a.has_i()) return a.i();
  return fallback;
}

bool is_layout_op(const Node& node) { return op_traits(node.domain, node.op_type).keeps_values(); }

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace modelcost
