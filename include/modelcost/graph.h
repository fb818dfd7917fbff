// The graph IR every stage after loading works on: tensors indexed by id, nodes in
// topological order, nested graphs for If/Loop/Scan bodies.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "modelcost/tensor.h"

namespace onnx { class NodeProto; class GraphProto; class ModelProto; class AttributeProto; }
namespace google::protobuf { class Arena; }

namespace modelcost {

struct Graph;

struct Subgraph {
  std::string attribute;  // "then_branch", "body", ...
  std::unique_ptr<Graph> graph;

  Subgraph(std::string attribute_name, std::unique_ptr<Graph> body);
  // A deep copy, body included: shape inference works on a copy of the model's graph.
  Subgraph(const Subgraph& other);
  Subgraph& operator=(const Subgraph& other);
  Subgraph(Subgraph&&) noexcept;
  Subgraph& operator=(Subgraph&&) noexcept;
  ~Subgraph();
};

struct Node {
  const onnx::NodeProto* proto = nullptr;
  std::string name;     // the file's name, or "<op_type>_<index>" when it has none
  std::string op_type;
  std::string domain;   // "" for the standard ai.onnx domain
  int opset = 0;        // version of `domain` imported by the model
  // Nodes expanded from a local function call: the chain of call-node names ("encoder/layer0")
  // and the innermost function ("domain.Name"); both empty for the graph's own nodes.
  std::string scope;
  std::string function;
  std::vector<int> inputs;   // tensor ids; -1 for an omitted optional input
  std::vector<int> outputs;  // tensor ids; -1 for an omitted optional output
  std::vector<int> implicit_inputs;  // outer-scope tensors read by subgraphs
  std::vector<Subgraph> subgraphs;
};

struct Graph {
  std::string name;
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, int> tensor_ids;
  std::vector<Node> nodes;   // topological order
  std::vector<int> inputs;   // graph inputs that are not initializers
  std::vector<int> outputs;
  // For a subgraph: local tensor id -> tensor id in the enclosing graph, for outer-scope names.
  std::vector<std::pair<int, int>> outer_refs;
  // Tensor id -> index in `nodes` of the node that outputs it, -1 for inputs and initializers.
  std::vector<int> producers;

  int find(const std::string& tensor_name) const {
    auto it = tensor_ids.find(tensor_name);
    return it == tensor_ids.end() ? -1 : it->second;
  }
  const Node* producer(int tensor_id) const {
    if (tensor_id < 0 || static_cast<size_t>(tensor_id) >= producers.size() || producers[tensor_id] < 0) return nullptr;
    return &nodes[producers[tensor_id]];
  }
  const Graph* find_subgraph(const Node& node, const std::string& attribute) const;
};

// A loaded model: the protobuf (which owns initializers and node protos the graph points to)
// and the graph built from it, as the file declares it. No stage changes it: the analysis
// shapes a copy of the graph (Analysis::graph).
struct Model {
  std::string path;
  // The protobuf lives in an arena: parsing a 20,000-node graph is then a few large allocations
  // rather than hundreds of thousands of small ones, and freeing it is one step.
  std::unique_ptr<google::protobuf::Arena> arena;
  onnx::ModelProto* proto = nullptr;  // owned by `arena`
  std::unordered_map<std::string, int> opsets;  // domain -> version ("" = ai.onnx)
  Graph graph;
  int ir_version = 0;
  std::string producer;
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
};

}  // namespace modelcost
