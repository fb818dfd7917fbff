#include "measure/node_spec.h"

#include <onnx/onnx_pb.h>

#include "modelcost/errors.h"

namespace modelcost {

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  auto it = ints.find(name);
  return it == ints.end() ? fallback : it->second;
}
double Attributes::get_float(const std::string& name, double fallback) const {
  auto it = floats.find(name);
  return it == floats.end() ? fallback : it->second;
}
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  auto it = strings.find(name);
  return it == strings.end() ? fallback : it->second;
}
std::vector<int64_t> Attributes::get_ints(const std::string& name) const {
  auto it = int_lists.find(name);
  return it == int_lists.end() ? std::vector<int64_t>{} : it->second;
}
bool Attributes::has(const std::string& name) const {
  return ints.count(name) || floats.count(name) || strings.count(name) || int_lists.count(name) ||
         float_lists.count(name);
}

const TensorSpec& NodeSpec::in(size_t i) const {
  static const TensorSpec absent;
  return i < inputs.size() ? inputs[i] : absent;
}

int32_t measurement_dtype(int32_t dtype, const std::string& option) {
  if (option.empty() || !dtype_is_float(dtype)) return dtype;
  if (option == "fp32" || option == "float32" || option == "tf32") return onnx::TensorProto::FLOAT;
  if (option == "fp16" || option == "float16") return onnx::TensorProto::FLOAT16;
  if (option == "bf16" || option == "bfloat16") return onnx::TensorProto::BFLOAT16;
  throw Error(kExitUsage, "--dtype " + option + ": measurement supports fp32, tf32, fp16 and bf16");
}

namespace {

TensorSpec tensor_spec(const Graph& graph, int id, const std::string& dtype_option) {
  TensorSpec t;
  if (id < 0) return t;
  const TensorInfo& info = graph.tensors[id];
  t.present = true;
  t.shape = info.shape;
  t.dtype = measurement_dtype(info.dtype, dtype_option);
  t.is_weight = info.initializer != nullptr;
  t.value = info.value;
  return t;
}

void read_attributes(const onnx::NodeProto& proto, Attributes& out) {
  for (const auto& a : proto.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: out.ints[a.name()] = a.i(); break;
      case onnx::AttributeProto::FLOAT: out.floats[a.name()] = a.f(); break;
      case onnx::AttributeProto::STRING: out.strings[a.name()] = a.s(); break;
      case onnx::AttributeProto::INTS: out.int_lists[a.name()].assign(a.ints().begin(), a.ints().end()); break;
      case onnx::AttributeProto::FLOATS:
        out.float_lists[a.name()].assign(a.floats().begin(), a.floats().end());
        break;
      default: break;  // graphs, tensors: not used by any runner
    }
  }
}

}  // namespace

namespace {
void append_tensor(std::string& key, const TensorSpec& t) {
  key += t.present ? "|" + std::to_string(t.dtype) + ":" + shape_to_string(t.shape) : "|-";
  if (!t.value) return;
  key += "=";
  for (size_t i = 0; i < t.value->size(); ++i) key += std::to_string(t.value->as_double(i)) + ",";
}
}  // namespace

std::string measurement_key(const NodeSpec& s) {
  std::string key = s.domain + "::" + s.op_type + "@" + std::to_string(s.opset) + (s.allow_tf32 ? " tf32" : "");
  // Nodes with subgraphs (If) run bodies the key does not describe: never taken for identical.
  if (s.node && !s.node->subgraphs.empty()) key += " subgraphs of " + s.name;
  const Attributes& a = s.attributes;
  for (const auto& [name, v] : a.ints) key += ";" + name + "=" + std::to_string(v);
  for (const auto& [name, v] : a.floats) key += ";" + name + "=" + std::to_string(v);
  for (const auto& [name, v] : a.strings) key += ";" + name + "=" + v;
  for (const auto& [name, v] : a.int_lists) key += ";" + name + "=" + shape_to_string(v);
  for (const auto& [name, v] : a.float_lists) {
    key += ";" + name + "=";
    for (double f : v) key += std::to_string(f) + ",";
  }
  key += " in";
  for (const auto& t : s.inputs) append_tensor(key, t);
  key += " out";
  for (const auto& t : s.outputs) append_tensor(key, t);
  return key;
}

NodeSpec make_node_spec(const NodeAnalysis& analysis, const std::string& dtype_option) {
  const Node& node = *analysis.node;
  const Graph& graph = *analysis.graph;
  NodeSpec spec;
  spec.name = node.name;
  spec.op_type = node.op_type;
  spec.domain = node.domain;
  spec.opset = node.opset;
  spec.allow_tf32 = dtype_option == "tf32";
  spec.graph = &graph;
  spec.node = &node;
  for (int id : node.inputs) spec.inputs.push_back(tensor_spec(graph, id, dtype_option));
  for (int id : node.outputs) spec.outputs.push_back(tensor_spec(graph, id, dtype_option));
  if (node.proto) read_attributes(*node.proto, spec.attributes);
  return spec;
}

}  // namespace modelcost
