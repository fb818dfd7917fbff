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

Subgraph::Subgraph(std::string attribute_name, std::unique_ptr<Graph> body)
    : attribute(std::move(attribute_name)), graph(std::move(body)) {}
Subgraph::Subgraph(const Subgraph& other)
    : attribute(other.attribute), graph(other.graph ? std::make_unique<Graph>(*other.graph) : nullptr) {}
Subgraph& Subgraph::operator=(const Subgraph& other) {
  if (this != &other) *this = Subgraph(other);
  return *this;
}
Subgraph::Subgraph(Subgraph&&) noexcept = default;
Subgraph& Subgraph::operator=(Subgraph&&) noexcept = default;
Subgraph::~Subgraph() = default;

const Graph* Graph::find_subgraph(const Node& node, const std::string& attribute) const {
  for (const auto& s : node.subgraphs)
    if (s.attribute == attribute) return s.graph.get();
  return nullptr;
}

}  // namespace modelcost
