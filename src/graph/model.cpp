#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include "modelcost/graph.h"

namespace modelcost {

Model::Model()
    : arena(std::make_unique<google::protobuf::Arena>()),
      proto(google::protobuf::Arena::CreateMessage<onnx::ModelProto>(arena.get())) {}
// Members go in reverse order: the graph (which points into the protobuf) before the arena.
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const Graph* Graph::find_subgraph(const Node& node, const std::string& attribute) const {
  for (const auto& s : node.subgraphs)
    if (s.attribute == attribute) return s.graph.get();
  return nullptr;
}

}  // namespace modelcost
