#include "graph/graph_builder.h"

#include <onnx/onnx_pb.h>

#include <queue>

#include "graph/tensor_proto.h"
#include "modelcost/errors.h"

namespace modelcost {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error(kExitInvalidModel, message); }

class Builder {
 public:
  Builder(const std::unordered_map<std::string, int>& opsets, int depth)
      : opsets_(opsets), is_subgraph_(depth > 0), depth_(depth) {}

  std::unique_ptr<Graph> build(const onnx::GraphProto& proto);
  // Names this (sub)graph reads but does not define: they come from the enclosing scope.
  const std::vector<std::string>& free_names() const { return free_names_; }

 private:
  // `what` says who defines the tensor, for the error message only.
  int define(const std::string& name, const char* what, const Node* node = nullptr);
  int resolve(const std::string& name, const Node* reader, const char* role = "input");
  void add_initializer(const onnx::TensorProto& t);
  void add_sparse_initializer(const onnx::SparseTensorProto& t);
  void sort_nodes(std::vector<Node>& nodes);

  const std::unordered_map<std::string, int>& opsets_;
  bool is_subgraph_;
  int depth_;  // 0 for the main graph, 1 for a body of one of its nodes, ...
  std::unique_ptr<Graph> g_ = std::make_unique<Graph>();
  std::vector<std::string> free_names_;
};

std::string describe(const Node* node) {
  return node ? "node '" + node->name + "' (" + node->op_type + ")" : std::string("the graph");
}

int Builder::define(const std::string& name, const char* what, const Node* node) {
  auto [it, inserted] = g_->tensor_ids.emplace(name, static_cast<int>(g_->tensors.size()));
  if (!inserted) fail("tensor '" + name + "' is defined twice (" + what + (node ? " of " + describe(node) : "") + ")");
  TensorInfo t;
  t.name = name;
  g_->tensors.push_back(std::move(t));
  return it->second;
}

int Builder::resolve(const std::string& name, const Node* reader, const char* role) {
  int id = g_->find(name);
  if (id >= 0) return id;
  if (!is_subgraph_)
    fail(std::string(role) + " '" + name + "' of " + describe(reader) +
         " is produced by no node and is neither a graph input nor an initializer");
  // Outer-scope reference: a local stand-in that the enclosing graph links to its tensor.
  id = define(name, "outer scope");
  free_names_.push_back(name);
  return id;
}

void Builder::add_initializer(const onnx::TensorProto& t) {
  const int id = define(t.name(), "initializer");
  TensorInfo& info = g_->tensors[id];
  info.is_initializer = true;
  info.initializer = &t;
  info.dtype = t.data_type();
  info.shape = tensor_proto_shape(t);
  if (const std::string bad = shape_limit_violation(info.shape); !bad.empty())
    fail("initializer '" + t.name() + "': " + bad);
  info.has_shape = true;
  // Integer tensors are usually shape constants: keep their contents for folding.
  const bool is_int = !dtype_is_float(info.dtype);
  info.value = read_tensor_value(t, is_int ? kMaxFoldedElements : 1024);
}

// A sparse weight: its dense shape is what the graph sees; its values are never folded.
void Builder::add_sparse_initializer(const onnx::SparseTensorProto& t) {
  const int id = define(t.values().name(), "sparse initializer");
  TensorInfo& info = g_->tensors[id];
  info.is_initializer = true;
  info.dtype = t.values().data_type();
  info.shape.assign(t.dims().begin(), t.dims().end());
  if (const std::string bad = shape_limit_violation(info.shape); !bad.empty())
    fail("sparse initializer '" + info.name + "': " + bad);
  info.has_shape = true;
}

std::unique_ptr<Graph> Builder::build(const onnx::GraphProto& proto) {
  if (depth_ > kMaxSubgraphDepth)
    fail("If/Loop/Scan bodies nest more than " + std::to_string(kMaxSubgraphDepth) + " levels deep");
  g_->name = proto.name();
  const size_t expected = proto.initializer_size() + proto.input_size() + 2 * proto.node_size();
  g_->tensors.reserve(expected);
  g_->tensor_ids.reserve(expected);
  for (const auto& t : proto.initializer()) add_initializer(t);
  for (const auto& t : proto.sparse_initializer()) add_sparse_initializer(t);
  for (const auto& vi : proto.input()) {
    int id = g_->find(vi.name());
    if (id < 0) {
      id = define(vi.name(), "graph input");
      g_->tensors[id].is_graph_input = true;
      g_->inputs.push_back(id);
    }
    g_->tensors[id].declared = &vi.type();
  }

  // Pass 1: every node's outputs, so inputs may refer to nodes listed later (unsorted files).
  std::vector<Node> nodes(proto.node_size());
  for (int i = 0; i < proto.node_size(); ++i) {
    const auto& np = proto.node(i);
    Node& n = nodes[i];
    n.proto = &np;
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? n.op_type + "_" + std::to_string(i) : np.name();
    auto op = opsets_.find(n.domain);
    n.opset = op == opsets_.end() ? 1 : op->second;
    n.outputs.reserve(np.output_size());
    for (const auto& out : np.output()) n.outputs.push_back(out.empty() ? -1 : define(out, "output", &n));
  }
  // Pass 2: inputs, subgraphs and their outer-scope reads.
  for (Node& n : nodes) {
    n.inputs.reserve(n.proto->input_size());
    for (const auto& in : n.proto->input()) n.inputs.push_back(in.empty() ? -1 : resolve(in, &n));
    for (const auto& a : n.proto->attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.type() == onnx::AttributeProto::GRAPH || a.has_g()) bodies.push_back(&a.g());
      for (const auto& gp : a.graphs()) bodies.push_back(&gp);
      for (const auto* body : bodies) {
        Builder child(opsets_, depth_ + 1);
        Subgraph sub{a.name(), child.build(*body)};
        for (const auto& name : child.free_names()) {
          const int outer = resolve(name, &n, "outer-scope name");
          sub.graph->outer_refs.emplace_back(sub.graph->find(name), outer);
          n.implicit_inputs.push_back(outer);
        }
        n.subgraphs.push_back(std::move(sub));
      }
    }
  }
  for (const auto& vi : proto.value_info()) {
    const int id = g_->find(vi.name());
    if (id >= 0) g_->tensors[id].declared = &vi.type();
  }
  for (const auto& vi : proto.output()) {
    const int id = is_subgraph_ ? resolve(vi.name(), nullptr, "output") : g_->find(vi.name());
    if (id < 0) fail("graph output '" + vi.name() + "' is produced by no node");
    if (!g_->tensors[id].declared) g_->tensors[id].declared = &vi.type();
    g_->outputs.push_back(id);
  }
  sort_nodes(nodes);
  return std::move(g_);
}

// Kahn's algorithm, stable in file order; a leftover node means a cycle.
void Builder::sort_nodes(std::vector<Node>& nodes) {
  std::vector<int> producer(g_->tensors.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int t : nodes[i].outputs)
      if (t >= 0) producer[t] = static_cast<int>(i);
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto add_dep = [&](int t) {
      if (t >= 0 && producer[t] >= 0) {
        ++pending[i];
        consumers[producer[t]].push_back(static_cast<int>(i));
      }
    };
    for (int t : nodes[i].inputs) add_dep(t);
    for (int t : nodes[i].implicit_inputs) add_dep(t);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0) ready.push(c);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) fail("the graph has a cycle through node '" + nodes[i].name + "' (" + nodes[i].op_type + ")");
  }
  g_->nodes.reserve(nodes.size());
  for (int i : order) g_->nodes.push_back(std::move(nodes[i]));
  g_->producers.assign(g_->tensors.size(), -1);
  for (size_t i = 0; i < g_->nodes.size(); ++i)
    for (int t : g_->nodes[i].outputs)
      if (t >= 0) g_->producers[t] = static_cast<int>(i);
}

}  // namespace

Graph build_graph(const onnx::GraphProto& proto, const std::unordered_map<std::string, int>& opsets) {
  Builder builder(opsets, 0);
  return std::move(*builder.build(proto));
}

}  // namespace modelcost
