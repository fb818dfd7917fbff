#include "measure/spec_graph.h"

#include <onnx/onnx_pb.h>

namespace modelcost {
namespace {

void write_attributes(const Attributes& a, onnx::NodeProto& proto) {
  const auto add = [&](const std::string& name, onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto* attribute = proto.add_attribute();
    attribute->set_name(name);
    attribute->set_type(type);
    return attribute;
  };
  for (const auto& [name, v] : a.ints) add(name, onnx::AttributeProto::INT)->set_i(v);
  for (const auto& [name, v] : a.floats) add(name, onnx::AttributeProto::FLOAT)->set_f(static_cast<float>(v));
  for (const auto& [name, v] : a.strings) add(name, onnx::AttributeProto::STRING)->set_s(v);
  for (const auto& [name, v] : a.int_lists) {
    onnx::AttributeProto* attribute = add(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) attribute->add_ints(x);
  }
  for (const auto& [name, v] : a.float_lists) {
    onnx::AttributeProto* attribute = add(name, onnx::AttributeProto::FLOATS);
    for (double x : v) attribute->add_floats(static_cast<float>(x));
  }
}

// The id of a new tensor of the graph (-1 for an omitted one).
int add_tensor(Graph& graph, const TensorSpec& t, const std::string& name) {
  if (!t.present) return -1;
  TensorInfo info;
  info.name = name;
  info.dtype = t.dtype;
  info.shape = t.shape;
  info.has_shape = true;
  info.is_initializer = t.is_weight;
  info.value = t.value;
  graph.tensors.push_back(std::move(info));
  const int id = static_cast<int>(graph.tensors.size()) - 1;
  graph.tensor_ids[name] = id;
  return id;
}

}  // namespace

SpecGraph::SpecGraph(const NodeSpec& spec) : proto_(std::make_unique<onnx::NodeProto>()) {
  proto_->set_op_type(spec.op_type);
  proto_->set_domain(spec.domain);
  write_attributes(spec.attributes, *proto_);
  Node node;
  node.proto = proto_.get();
  node.name = spec.name;
  node.op_type = spec.op_type;
  node.domain = spec.domain;
  node.opset = spec.opset;
  for (size_t i = 0; i < spec.inputs.size(); ++i) node.inputs.push_back(add_tensor(graph_, spec.inputs[i], "in" + std::to_string(i)));
  for (size_t o = 0; o < spec.outputs.size(); ++o)
    node.outputs.push_back(add_tensor(graph_, spec.outputs[o], "out" + std::to_string(o)));
  graph_.nodes.push_back(std::move(node));
  graph_.producers.assign(graph_.tensors.size(), -1);
  for (int id : graph_.nodes.front().outputs)
    if (id >= 0) graph_.producers[static_cast<size_t>(id)] = 0;
}

SpecGraph::~SpecGraph() = default;

}  // namespace modelcost
