#include <onnx/onnx_pb.h>

#include "modelcost/graph.h"

namespace modelcost {

Model::Model() : proto(std::make_unique<onnx::ModelProto>()) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const Graph* Graph::find_subgraph(const Node& node, const std::string& attribute) const {
  for (const auto& s : node.subgraphs)
    if (s.attribute == attribute) return s.graph.get();
  return nullptr;
}

}  // namespace modelcost
