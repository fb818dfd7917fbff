// Who produces and who reads each tensor of the top-level graph, and small lookups the decoder
// recognition walks with.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelcost/analysis.h"

namespace onnx { class TensorShapeProto; }

namespace modelcost {

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  const Graph& graph() const { return graph_; }
  const TensorInfo& tensor(int id) const { return graph_.tensors[id]; }
  // The node that writes tensor `id`; nullptr for graph inputs and initializers.
  const Node* producer(int id) const { return id >= 0 ? producers_[id] : nullptr; }
  const std::vector<const Node*>& consumers(int id) const { return consumers_[id]; }
  // Initializers a constant input is computed from (through Transpose, Cast, DequantizeLinear,
  // Reshape, ...); empty when a graph input reaches it, i.e. it is not a stored weight.
  std::vector<int> weight_sources(int id) const;

 private:
  bool collect_sources(int id, int depth, std::vector<int>& out) const;
  const Graph& graph_;
  std::vector<const Node*> producers_;
  std::vector<std::vector<const Node*>> consumers_;
};

// The shape the file declares for a tensor (graph inputs and outputs); nullptr when none.
const onnx::TensorShapeProto* declared_shape(const TensorInfo& tensor);
// The declared dim's symbol ("" when it is a number or absent) and value (0 when symbolic).
std::string declared_symbol(const TensorInfo& tensor, int dim);
int64_t declared_value(const TensorInfo& tensor, int dim);
// The element type the file declares (onnx::TensorProto's enum); the tensor's own before shapes
// are inferred, a loaded graph's inputs carry none.
int32_t declared_dtype(const TensorInfo& tensor);
// An integer attribute of the node, or `fallback`.
int64_t node_int_attr(const Node& node, const char* name, int64_t fallback);
// Views, permutations, repeats and conversions (Reshape, Transpose, Expand, Cast): ops whose output
// holds their input's values, moved or converted, none computed or dropped (OpTraits::keeps_values).
bool is_layout_op(const Node& node);
std::string lowercase(std::string text);

}  // namespace modelcost
