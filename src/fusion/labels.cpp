// What a group computes, named from its members: a table of recognisers, each a name and a test
// on the op types (and a little structure) of the members.
#include <algorithm>
#include <cctype>
#include <map>

#include "fusion/patterns.h"

namespace modelcost::fusion {
namespace {

struct OpCounts {
  std::map<std::string, int> ops;
  int count(const std::string& op) const {
    auto it = ops.find(op);
    return it == ops.end() ? 0 : it->second;
  }
  bool has(const std::string& op) const { return count(op) > 0; }
};

// Member m is Mul(x, Sigmoid(x)) with the Sigmoid a member too.
bool is_silu_mul(const FusionGraph& g, const std::vector<size_t>& members, size_t m) {
  if (g.op(m) != "Mul") return false;
  for (int id : g.node(m).inputs) {
    const int p = g.producer(id);
    if (p >= 0 && g.op(p) == "Sigmoid" && contains(members, size_t(p)))
      for (int other : g.node(m).inputs)
        if (other == g.node(p).inputs.front()) return true;
  }
  return false;
}

bool has_silu(const FusionGraph& g, const std::vector<size_t>& members) {
  for (size_t m : members)
    if (is_silu_mul(g, members, m)) return true;
  return false;
}

// silu(x) gating a tensor computed outside the group: Mul(silu(x), y).
bool has_gated_silu(const FusionGraph& g, const std::vector<size_t>& members) {
  for (size_t m : members) {
    if (g.op(m) != "Mul") continue;
    bool gate = false, outside = false;
    for (int id : g.dynamic_inputs(m)) {
      const int p = g.producer(id);
      const bool inside = p >= 0 && contains(members, size_t(p));
      gate = gate || (inside && is_silu_mul(g, members, size_t(p)));
      outside = outside || !inside;
    }
    if (gate && outside) return true;
  }
  return false;
}

// An Add of two computed tensors (a residual or skip connection).
bool has_residual_add(const FusionGraph& g, const std::vector<size_t>& members) {
  for (size_t m : members)
    if (g.op(m) == "Add" && g.dynamic_inputs(m).size() == 2) return true;
  return false;
}

bool has_constant_operand(const FusionGraph& g, const std::vector<size_t>& members, const char* op) {
  for (size_t m : members)
    if (g.op(m) == op && g.dynamic_inputs(m).size() < g.node(m).inputs.size()) return true;
  return false;
}

struct Recogniser {
  const char* name;
  std::function<bool(const FusionGraph&, const std::vector<size_t>&, const OpCounts&)> test;
};

const std::vector<Recogniser>& recognisers() {
  using M = const std::vector<size_t>&;
  using G = const FusionGraph&;
  using C = const OpCounts&;
  static const std::vector<Recogniser> table = {
      {"bias", [](G g, M m, C) { return has_constant_operand(g, m, "Add"); }},
      {"bn", [](G, M, C c) { return c.has("BatchNormalization"); }},
      {"scale", [](G g, M m, C c) { return has_constant_operand(g, m, "Mul") && !c.has("Erf") && !c.has("Tanh") && !c.has("ReduceMean"); }},
      {"layer_norm", [](G, M, C c) {
         return c.has("LayerNormalization") || c.has("SkipLayerNormalization") ||
                (c.has("ReduceMean") && c.has("Sub") && (c.has("Sqrt") || c.has("Reciprocal")));
       }},
      {"rms_norm", [](G, M, C c) {
         return c.has("SimplifiedLayerNormalization") || c.has("SkipSimplifiedLayerNormalization") ||
                c.has("RMSNormalization") ||
                (c.has("ReduceMean") && !c.has("Sub") && (c.has("Sqrt") || c.has("Reciprocal")) && (c.has("Pow") || c.has("Mul")));
       }},
      {"softmax", [](G, M, C c) { return c.has("Softmax") || (c.has("Exp") && c.has("ReduceSum") && c.has("Div")); }},
      {"l2_norm", [](G, M, C c) { return c.has("ReduceL2") && c.has("Div"); }},
      {"gelu", [](G, M, C c) { return c.has("Gelu") || c.has("FastGelu") || c.has("Erf") || (c.has("Tanh") && c.has("Pow")); }},
      {"swiglu", [](G g, M m, C) { return has_gated_silu(g, m); }},
      {"silu", [](G g, M m, C) { return has_silu(g, m); }},
      {"hardswish", [](G, M, C c) { return c.has("HardSwish") || (c.has("HardSigmoid") && c.has("Mul")); }},
      {"sigmoid", [](G g, M m, C c) { return c.has("Sigmoid") && !has_silu(g, m); }},
      {"relu", [](G, M, C c) { return c.has("Relu"); }},
      {"clip", [](G, M, C c) { return c.has("Clip"); }},
      {"tanh", [](G, M, C c) { return c.has("Tanh") && !c.has("Pow"); }},
      {"add", [](G g, M m, C) { return has_residual_add(g, m); }},
  };
  return table;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::vector<std::string> recognise(const FusionGraph& g, const std::vector<size_t>& members) {
  OpCounts counts;
  for (size_t m : members) ++counts.ops[g.op(m)];
  std::vector<std::string> found;
  for (const auto& r : recognisers())
    if (r.test(g, members, counts)) found.push_back(r.name);
  // A gated unit is not also a plain SiLU; a norm's scale is part of the norm.
  auto drop = [&](const char* name, const char* because) {
    if (std::count(found.begin(), found.end(), because))
      found.erase(std::remove(found.begin(), found.end(), std::string(name)), found.end());
  };
  drop("silu", "swiglu");
  for (const char* norm : {"layer_norm", "rms_norm", "softmax", "l2_norm"}) {
    drop("scale", norm);
    drop("bias", norm);
    drop("add", norm);
  }
  return found;
}

std::string epilogue_label(const FusionGraph& g, const FusedGroup& group) {
  std::string label = lower(g.op(group.anchor));
  std::vector<size_t> rest;
  for (size_t m : group.members)
    if (m != group.anchor) rest.push_back(m);
  for (const auto& tag : recognise(g, rest))
    if (tag != "swiglu") label += "+" + tag;
  return label;
}

std::string region_label(const FusionGraph& g, const FusedGroup& group) {
  const std::vector<std::string> tags = recognise(g, group.members);
  for (const char* primary : {"layer_norm", "rms_norm", "softmax", "l2_norm", "swiglu", "gelu", "silu", "hardswish"})
    if (std::count(tags.begin(), tags.end(), primary)) return primary;
  if (group.members.size() == 1) return lower(g.op(group.anchor));
  for (size_t m : group.members)
    if (g.kind(m) == OpKind::kReduction) return "reduce";
  return "pointwise";
}

std::string attention_label(const FusionGraph& g, const FusedGroup& group) {
  std::string label = "attention";
  bool mask = false, rotary = false, repeat = false, cache = false;
  for (size_t m : group.members) {
    const std::string& op = g.op(m);
    if (op == "Where" || op == "Add")  // a score update reading a (non-scalar) tensor from outside: the mask
      for (int id : g.node(m).inputs)
        if (id >= 0 && (g.producer(id) < 0 || !contains(group.members, size_t(g.producer(id)))) &&
            element_count(g.graph().tensors[id].shape) > 1)
          mask = true;
    if (op == "Neg") rotary = true;
    if (g.traits(m).repeat) repeat = true;  // repeat_kv: K/V heads shared by query groups
    if (op == "Concat" && !rotary) cache = true;
  }
  if (mask) label += "+mask";
  if (rotary) label += "+rotary";
  if (repeat) label += "+gqa";
  if (cache && !rotary) label += "+kv_concat";
  return label;
}

std::string op_label(const FusionGraph& g, const FusedGroup& group) { return lower(g.op(group.anchor)); }

}  // namespace modelcost::fusion
