// A one-node graph of a NodeSpec made up in code (the calibration grid's GEMMs and convs), so
// that the op rule's plan builder reads it as it reads a node of an analysed model.
#pragma once
#include <memory>

#include "measure/node_spec.h"
#include "modelcost/graph.h"

namespace onnx { class NodeProto; }

namespace modelcost {

class SpecGraph {
 public:
  explicit SpecGraph(const NodeSpec& spec);
  ~SpecGraph();
  SpecGraph(const SpecGraph&) = delete;
  SpecGraph& operator=(const SpecGraph&) = delete;

  const Graph& graph() const { return graph_; }
  const Node& node() const { return graph_.nodes.front(); }

 private:
  std::unique_ptr<onnx::NodeProto> proto_;  // the spec's attributes, which the rules read
  Graph graph_;
};

}  // namespace modelcost
