#include "load/function_inliner.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <vector>

#include "load/model_limits.h"
#include "modelcost/errors.h"
#include "modelcost/graph.h"

namespace modelcost {
namespace {

using onnx::AttributeProto;
using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::NodeProto;
using Renames = std::unordered_map<std::string, std::string>;

// FunctionProto.attribute_proto (field 11, ONNX 1.13+): attributes with default values. ONNX
// 1.12's generated classes do not know the field, so it is read from the unknown fields.
std::map<std::string, AttributeProto> attribute_defaults(const FunctionProto& f) {
  std::map<std::string, AttributeProto> defaults;
  constexpr int kAttributeProtoField = 11;
  const google::protobuf::UnknownFieldSet& unknown = f.GetReflection()->GetUnknownFields(f);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& field = unknown.field(i);
    if (field.number() != kAttributeProtoField || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    AttributeProto a;
    if (a.ParseFromString(field.length_delimited())) defaults[a.name()] = a;
  }
  return defaults;
}

std::string function_key(const std::string& domain, const std::string& name) { return domain + "::" + name; }

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, std::unordered_map<std::string, int>& opsets) : opsets_(opsets) {
    for (const auto& f : model.functions()) functions_[function_key(f.domain(), f.name())] = &f;
  }
  bool any() const { return !functions_.empty(); }
  // Appends `nodes` to `out` with their calls expanded (recursively); `top` records scopes of the
  // main graph's nodes. One output vector for every level: each node is copied once, however deep.
  void expand(const std::vector<NodeProto>& nodes, const std::string& scope, const std::string& function, bool top,
              std::vector<NodeProto>& out);
  void expand_graph(GraphProto& graph, bool top);
  InlinedScopes take_scopes() { return std::move(scopes_); }
  // Nodes the graph becomes once expanded, bodies included; counted (not built) up to just past
  // kMaxModelNodes, so that functions calling functions twice each, 40 deep, fail at once.
  int64_t expanded_size(const GraphProto& graph);

 private:
  int64_t expanded_size(const NodeProto& node);
  std::vector<NodeProto> instantiate(const FunctionProto& f, const NodeProto& call, const std::string& prefix);
  void expand_subgraphs(NodeProto& node);

  std::unordered_map<std::string, int>& opsets_;
  std::unordered_map<std::string, const FunctionProto*> functions_;
  std::vector<std::string> stack_;  // functions being expanded, to refuse recursion
  InlinedScopes scopes_;
  int calls_ = 0;
  std::unordered_map<const FunctionProto*, int64_t> function_sizes_;  // memo; -1 while being counted
};

int64_t Inliner::expanded_size(const GraphProto& graph) {
  int64_t size = 0;
  for (const auto& node : graph.node()) size = std::min(size + expanded_size(node), kMaxModelNodes + 1);
  return size;
}

int64_t Inliner::expanded_size(const NodeProto& node) {
  int64_t size = 1;
  auto it = functions_.find(function_key(node.domain() == "ai.onnx" ? "" : node.domain(), node.op_type()));
  if (it != functions_.end()) {
    auto [memo, fresh] = function_sizes_.emplace(it->second, -1);
    if (fresh) {
      int64_t body = 0;
      for (const auto& inner : it->second->node()) body = std::min(body + expanded_size(inner), kMaxModelNodes + 1);
      function_sizes_[it->second] = body;
    }
    size = std::max<int64_t>(function_sizes_[it->second], 0);  // -1: a recursive call, which expand() reports
  }
  for (const auto& a : node.attribute()) {
    if (a.has_g()) size += expanded_size(a.g());
    for (const auto& g : a.graphs()) size += expanded_size(g);
  }
  return std::min(size, kMaxModelNodes + 1);
}

// Names read or written inside a subgraph body that belong to the function's scope.
void rename_in_graph(GraphProto& g, const Renames& renames) {
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (auto it = renames.find(in); it != renames.end()) in = it->second;
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_in_graph(*a.mutable_g(), renames);
      for (auto& sub : *a.mutable_graphs()) rename_in_graph(sub, renames);
    }
  }
  for (auto& out : *g.mutable_output())
    if (auto it = renames.find(out.name()); it != renames.end()) out.set_name(it->second);
}

// Replaces attribute references (ref_attr_name) by the call's attribute or the default.
void resolve_attribute_refs(NodeProto& n, const NodeProto& call, const std::map<std::string, AttributeProto>& defaults) {
  google::protobuf::RepeatedPtrField<AttributeProto> resolved;
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) for (auto& sub : *a.mutable_g()->mutable_node()) resolve_attribute_refs(sub, call, defaults);
    for (auto& g : *a.mutable_graphs())
      for (auto& sub : *g.mutable_node()) resolve_attribute_refs(sub, call, defaults);
    if (a.ref_attr_name().empty()) {
      *resolved.Add() = a;
      continue;
    }
    const AttributeProto* source = nullptr;
    for (const auto& given : call.attribute())
      if (given.name() == a.ref_attr_name()) source = &given;
    if (!source)
      if (auto it = defaults.find(a.ref_attr_name()); it != defaults.end()) source = &it->second;
    if (!source) continue;  // not given: the op's own default applies
    AttributeProto copy = *source;
    copy.set_name(a.name());
    *resolved.Add() = copy;
  }
  n.mutable_attribute()->Swap(&resolved);
}

std::vector<NodeProto> Inliner::instantiate(const FunctionProto& f, const NodeProto& call, const std::string& prefix) {
  Renames renames;
  for (int i = 0; i < f.input_size(); ++i) renames[f.input(i)] = i < call.input_size() ? call.input(i) : "";
  for (int i = 0; i < f.output_size(); ++i) renames[f.output(i)] = i < call.output_size() ? call.output(i) : "";
  auto rename = [&](const std::string& name) {
    if (name.empty()) return name;
    auto [it, inserted] = renames.emplace(name, prefix + name);
    return it->second;
  };
  const auto defaults = attribute_defaults(f);
  std::vector<NodeProto> body;
  body.reserve(f.node_size());
  for (const NodeProto& inner : f.node()) {
    NodeProto n = inner;
    for (auto& in : *n.mutable_input()) in = rename(in);
    for (auto& out : *n.mutable_output()) out = rename(out);
    n.set_name(prefix + (inner.name().empty() ? inner.op_type() + "_" + std::to_string(body.size()) : inner.name()));
    resolve_attribute_refs(n, call, defaults);
    body.push_back(std::move(n));
  }
  // Outer-scope reads of subgraph bodies, once every name of the function is known.
  for (auto& n : body)
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_in_graph(*a.mutable_g(), renames);
      for (auto& g : *a.mutable_graphs()) rename_in_graph(g, renames);
    }
  for (const auto& op : f.opset_import()) opsets_.emplace(op.domain() == "ai.onnx" ? "" : op.domain(), op.version());
  return body;
}

void Inliner::expand(const std::vector<NodeProto>& nodes, const std::string& scope, const std::string& function,
                     bool top, std::vector<NodeProto>& out) {
  for (const NodeProto& node : nodes) {
    auto it = functions_.find(function_key(node.domain() == "ai.onnx" ? "" : node.domain(), node.op_type()));
    if (it == functions_.end()) {
      out.push_back(node);
      expand_subgraphs(out.back());
      if (top && !scope.empty() && out.back().output_size() > 0) scopes_[out.back().output(0)] = {scope, function};
      continue;
    }
    const FunctionProto& f = *it->second;
    const std::string name = (f.domain().empty() ? "" : f.domain() + ".") + f.name();
    for (const auto& active : stack_)
      if (active == name) {
        std::string chain;
        for (const auto& s : stack_) chain += s + " -> ";
        throw Error(kExitInvalidModel, "local function " + name + " calls itself (" + chain + name +
                                           "); recursive functions cannot be expanded");
      }
    const std::string call = node.name().empty() ? node.op_type() + "_call" + std::to_string(calls_++) : node.name();
    // Calls inside a function body were already named "<scope>/<name>" when it was instantiated.
    const bool prefixed = scope.empty() || call.rfind(scope + "/", 0) == 0;
    const std::string inner_scope = prefixed ? call : scope + "/" + call;
    stack_.push_back(name);
    expand(instantiate(f, node, inner_scope + "/"), inner_scope, name, top, out);
    stack_.pop_back();
  }
}

void Inliner::expand_subgraphs(NodeProto& node) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.has_g()) expand_graph(*a.mutable_g(), false);
    for (auto& g : *a.mutable_graphs()) expand_graph(g, false);
  }
}

void Inliner::expand_graph(GraphProto& graph, bool top) {
  std::vector<NodeProto> nodes(graph.node().begin(), graph.node().end());
  std::vector<NodeProto> expanded;
  expanded.reserve(static_cast<size_t>(std::max<int64_t>(expanded_size(graph), 0)));
  expand(nodes, "", "", top, expanded);
  graph.clear_node();
  graph.mutable_node()->Reserve(static_cast<int>(expanded.size()));
  for (auto& n : expanded) *graph.add_node() = std::move(n);
}

}  // namespace

InlinedScopes inline_local_functions(onnx::ModelProto& model, std::unordered_map<std::string, int>& opsets) {
  Inliner inliner(model, opsets);
  if (!inliner.any()) return {};
  if (inliner.expanded_size(model.graph()) > kMaxModelNodes)
    throw Error(kExitInvalidModel, "local functions expand to over " + std::to_string(kMaxModelNodes) +
                                       " nodes, more than modelcost analyses");
  inliner.expand_graph(*model.mutable_graph(), true);
  return inliner.take_scopes();
}

void assign_scopes(Graph& graph, const InlinedScopes& scopes) {
  if (scopes.empty()) return;
  for (Node& node : graph.nodes) {
    if (node.outputs.empty() || node.outputs[0] < 0) continue;
    auto it = scopes.find(graph.tensors[node.outputs[0]].name);
    if (it == scopes.end()) continue;
    node.scope = it->second.scope;
    node.function = it->second.function;
  }
}

}  // namespace modelcost
