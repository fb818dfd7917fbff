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

// A name as inlined names carry it: itself when short, else its head and a serial that keeps it
// unique, so a 100 KB name is not copied into every node of every call.
std::string bounded_name(const std::string& name, size_t serial) {
  if (name.size() <= kMaxInlinedNameBytes) return name;
  return name.substr(0, kMaxInlinedNameBytes / 2) + "~" + std::to_string(serial);
}

// "domain.Name", bounded: it is kept with every inlined node and may be printed.
std::string display_name(const FunctionProto& f) {
  return bounded_name((f.domain().empty() ? "" : f.domain() + ".") + f.name(), 0);
}

[[noreturn]] void too_deep() {
  throw Error(kExitInvalidModel, "local functions call each other over " + std::to_string(kMaxFunctionNesting) +
                                     " levels deep, more than modelcost expands");
}

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, std::unordered_map<std::string, int>& opsets) : opsets_(opsets) {
    for (const auto& f : model.functions()) functions_[function_key(f.domain(), f.name())] = &f;
  }
  bool any() const { return !functions_.empty(); }
  // Appends `nodes` to `out` with their calls expanded (recursively, at most kMaxFunctionNesting
  // deep); `top` records scopes of the main graph's nodes. One output vector for every level:
  // each node is copied once, however deep.
  void expand(const std::vector<NodeProto>& nodes, const std::string& scope, const std::string& function, bool top,
              std::vector<NodeProto>& out);
  void expand_graph(GraphProto& graph, bool top);
  InlinedScopes take_scopes() { return std::move(scopes_); }
  // Nodes the graph becomes once expanded, bodies and the calls expanded included; counted (not built) up to just past
  // kMaxModelNodes, so that functions calling functions twice each, 40 deep, fail at once.
  int64_t expanded_size(const GraphProto& graph, int depth = 0);

 private:
  int64_t expanded_size(const NodeProto& node, int depth);
  const FunctionProto* callee(const NodeProto& node) const;
  std::string call_scope(const NodeProto& node, const std::string& scope);
  void charge(const NodeProto& copy);
  std::vector<NodeProto> instantiate(const FunctionProto& f, const NodeProto& call, const std::string& prefix);
  void expand_subgraphs(NodeProto& node);

  std::unordered_map<std::string, int>& opsets_;
  std::unordered_map<std::string, const FunctionProto*> functions_;
  std::vector<const FunctionProto*> stack_;  // functions being expanded, to refuse recursion
  InlinedScopes scopes_;
  int calls_ = 0;       // unnamed calls, numbered in their names
  size_t sites_ = 0;    // call sites whose scope is too long to spell out
  int64_t expanded_bytes_ = 0;
  std::unordered_map<const FunctionProto*, int64_t> function_sizes_;  // memo; -1 while being counted
};

const FunctionProto* Inliner::callee(const NodeProto& node) const {
  auto it = functions_.find(function_key(node.domain() == "ai.onnx" ? "" : node.domain(), node.op_type()));
  return it == functions_.end() ? nullptr : it->second;
}

int64_t Inliner::expanded_size(const GraphProto& graph, int depth) {
  int64_t size = 0;
  for (const auto& node : graph.node()) size = std::min(size + expanded_size(node, depth), kMaxModelNodes + 1);
  return size;
}

// One memo for every call site: each function's body is counted once, at the first call reached.
int64_t Inliner::expanded_size(const NodeProto& node, int depth) {
  int64_t size = 1;
  if (const FunctionProto* f = callee(node)) {
    auto [memo, fresh] = function_sizes_.emplace(f, -1);
    if (fresh) {
      if (depth >= kMaxFunctionNesting) too_deep();
      int64_t body = 0;
      for (const auto& inner : f->node()) body = std::min(body + expanded_size(inner, depth + 1), kMaxModelNodes + 1);
      function_sizes_[f] = body;
    }
    // The call itself counts too: bodies of nothing but calls to empty functions come out as no
    // node at all, yet expanding them copies every call (300 calls a level, 4 levels: 8e9).
    size = 1 + std::max<int64_t>(function_sizes_[f], 0);  // -1: a recursive call, which expand() reports
  }
  for (const auto& a : node.attribute()) {
    if (a.has_g()) size += expanded_size(a.g(), depth);
    for (const auto& g : a.graphs()) size += expanded_size(g, depth);
  }
  return std::min(size, kMaxModelNodes + 1);
}

// The bytes of every node copied out of a function body count against one budget.
void Inliner::charge(const NodeProto& copy) {
  expanded_bytes_ += static_cast<int64_t>(copy.ByteSizeLong());
  if (expanded_bytes_ > kMaxExpandedFunctionBytes)
    throw Error(kExitInvalidModel, "local functions expand to over " + std::to_string(kMaxExpandedFunctionBytes >> 20) +
                                       " MB of nodes, more than modelcost analyses");
}

// "<scope>/<call name>", or a call-site id where that would pass kMaxScopeBytes, so names stay
// bounded however deep the calls nest.
std::string Inliner::call_scope(const NodeProto& node, const std::string& scope) {
  std::string call = node.name().empty() ? node.op_type() + "_call" + std::to_string(calls_++) : node.name();
  // Calls inside a function body were already named "<scope>/<name>" when it was instantiated.
  if (!scope.empty() && call.rfind(scope + "/", 0) != 0) call = scope + "/" + call;
  if (call.size() <= kMaxScopeBytes) return call;
  return "call~" + std::to_string(sites_++);
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
    auto it = renames.find(name);
    if (it == renames.end()) it = renames.emplace(name, prefix + bounded_name(name, renames.size())).first;
    return it->second;
  };
  const auto defaults = attribute_defaults(f);
  std::vector<NodeProto> body;
  body.reserve(f.node_size());
  for (const NodeProto& inner : f.node()) {
    NodeProto n = inner;
    for (auto& in : *n.mutable_input()) in = rename(in);
    for (auto& out : *n.mutable_output()) out = rename(out);
    n.set_name(prefix + (inner.name().empty() ? bounded_name(inner.op_type(), body.size()) + "_" + std::to_string(body.size())
                                              : bounded_name(inner.name(), body.size())));
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
    const FunctionProto* f = callee(node);
    if (!f) {
      out.push_back(node);
      expand_subgraphs(out.back());
      if (!scope.empty()) charge(out.back());
      if (top && !scope.empty() && out.back().output_size() > 0) scopes_[out.back().output(0)] = {scope, function};
      continue;
    }
    const std::string name = display_name(*f);
    if (std::find(stack_.begin(), stack_.end(), f) != stack_.end()) {
      std::string chain;
      for (const FunctionProto* active : stack_) chain += display_name(*active) + " -> ";
      throw Error(kExitInvalidModel, "local function " + name + " calls itself (" + chain + name +
                                         "); recursive functions cannot be expanded");
    }
    if (stack_.size() >= static_cast<size_t>(kMaxFunctionNesting)) too_deep();
    const std::string inner_scope = call_scope(node, scope);
    stack_.push_back(f);
    expand(instantiate(*f, node, inner_scope + "/"), inner_scope, name, top, out);
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
