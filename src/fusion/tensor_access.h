// Reading a node's operand shapes and attributes, shared by the GEMM shapes, the kernel classes
// and the kernel plan's splits.
#pragma once
#include "modelcost/analysis.h"

namespace modelcost::fusion {

// Input (or output) `index` of the node when its shape is known and every dim positive; else nullptr.
inline const TensorInfo* shaped_operand(const NodeAnalysis& node, size_t index, bool output) {
  const auto& ids = output ? node.node->outputs : node.node->inputs;
  if (index >= ids.size() || ids[index] < 0) return nullptr;
  const TensorInfo& t = node.graph->tensors[ids[index]];
  if (!t.has_shape) return nullptr;
  for (int64_t d : t.shape)
    if (d <= 0) return nullptr;
  return &t;
}

// The node's integer attribute `name`, or `fallback` where it has none.
int64_t int_attribute(const Node& node, const char* name, int64_t fallback);

// The product of dims [from, to) as a double (no overflow on hostile shapes).
inline double dims_product(const Shape& s, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

}  // namespace modelcost::fusion
