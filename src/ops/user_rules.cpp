#include "ops/user_rules.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "modelcost/errors.h"
#include "ops/defs/fused_helpers.h"
#include "ops/user_formula.h"

namespace modelcost {
namespace {

namespace fs = std::filesystem;

enum class ShapeKind { kSameAsInput, kBroadcast, kMatmul, kFormula };

struct UserOpRule {
  std::string domain;
  std::string op_type;
  ShapeKind shape = ShapeKind::kSameAsInput;
  size_t input = 0;           // same_as_input: which input; also whose dtype the outputs take
  int32_t dtype = 0;          // fixed output dtype, 0 = input `input`'s
  std::vector<Formula> dims;  // formula: one per output dim
  std::optional<Formula> macs, flops;
  double flops_per_output = 0;
};

// Rules live as long as the process (registries hold views of their names); the table points at
// the latest rule of each op.
std::deque<UserOpRule>& rule_store() {
  static std::deque<UserOpRule> store;
  return store;
}
std::map<std::string, const UserOpRule*>& rule_table() {
  static std::map<std::string, const UserOpRule*> table;
  return table;
}

std::string rule_key(const std::string& domain, const std::string& op_type) {
  return (is_standard_domain(domain) ? std::string() : domain) + "::" + op_type;
}

const UserOpRule& rule_of(const OpContext& c) {
  const auto it = rule_table().find(rule_key(c.node().domain, c.node().op_type));
  if (it == rule_table().end()) c.fail("no user op rule is loaded for this op");
  return *it->second;
}

// Long formulas are cut in messages.
std::string excerpt(const std::string& text) { return text.size() <= 80 ? text : text.substr(0, 77) + "..."; }

// A dim formula's value, range-checked before it becomes an int64 (1e300 or inf is an error).
int64_t formula_dim(const OpContext& c, const Formula& f) {
  const double d = f.evaluate(c);
  if (!(d >= 0 && d <= static_cast<double>(kMaxTensorDim)) || d != std::floor(d)) {
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", d);
    c.fail("user op rule dim '" + excerpt(f.text()) + "' = " + value + " is not a whole number in [0, 2^50]");
  }
  return static_cast<int64_t>(d);
}

void infer_user_op(OpContext& c) {
  const UserOpRule& r = rule_of(c);
  if (!c.has_input(r.input)) c.fail("user op rule reads input " + std::to_string(r.input) + ", which the node lacks");
  Shape out;
  switch (r.shape) {
    case ShapeKind::kSameAsInput: out = c.in_shape(r.input); break;
    case ShapeKind::kBroadcast:
      for (size_t i = 0; i < c.num_inputs(); ++i)
        if (c.has_input(i)) out = i == 0 ? c.in_shape(0) : broadcast_shapes(out, c.in_shape(i), c);
      break;
    case ShapeKind::kMatmul: out = matmul_shape(c, c.in_shape(0), c.in_shape(1)); break;
    case ShapeKind::kFormula:
      for (const Formula& f : r.dims) out.push_back(formula_dim(c, f));
      break;
  }
  const int32_t dtype = r.dtype ? r.dtype : c.in_dtype(r.input);
  for (size_t i = 0; i < c.num_outputs(); ++i) c.set_output(i, dtype, out);
}

OpCost cost_user_op(const OpContext& c) {
  const UserOpRule& r = rule_of(c);
  OpCost cost;
  if (r.macs) cost.macs = r.macs->evaluate(c);
  else if (r.shape == ShapeKind::kMatmul) cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  cost.flops = r.flops ? r.flops->evaluate(c) : 2 * cost.macs + r.flops_per_output * output_elements(c);
  if (!(cost.macs >= 0 && cost.flops >= 0) || !std::isfinite(cost.macs) || !std::isfinite(cost.flops))
    c.fail("user op rule gives a negative, infinite or NaN cost");
  return cost;
}

int32_t dtype_named(const std::string& name, const std::function<void(const std::string&)>& fail) {
  static const std::map<std::string, int32_t> names = {
      {"float32", 1}, {"uint8", 2}, {"int8", 3}, {"int32", 6}, {"int64", 7}, {"bool", 9},
      {"float16", 10}, {"float64", 11}, {"bfloat16", 16}};
  auto it = names.find(name);
  if (it == names.end()) fail("dtype '" + name + "' is not one of float32, float16, bfloat16, float64, int8, uint8, int32, int64, bool");
  return it->second;
}

// One [[op]] table.
UserOpRule read_rule(const toml::table& t, const std::function<void(const std::string&)>& fail) {
  UserOpRule r;
  r.op_type = t["type"].value_or(std::string());
  if (r.op_type.empty()) fail("every [[op]] needs type = \"OpName\"");
  r.domain = t["domain"].value_or(std::string());
  auto op_fail = [&](const std::string& what) { fail("op " + r.op_type + ": " + what); };
  auto formula = [&](const std::string& key, const std::string& text) {
    try {
      return Formula(text);
    } catch (const std::invalid_argument& e) {
      op_fail(key + ": " + e.what());
    }
    return Formula("0");
  };
  const std::string shape = t["shape"].value_or(std::string(t.contains("dims") ? "formula" : "same_as_input"));
  static const std::map<std::string, ShapeKind> kinds = {{"same_as_input", ShapeKind::kSameAsInput},
                                                        {"broadcast", ShapeKind::kBroadcast},
                                                        {"matmul", ShapeKind::kMatmul},
                                                        {"formula", ShapeKind::kFormula}};
  if (!kinds.count(shape)) op_fail("shape = \"" + shape + "\" is not one of same_as_input, broadcast, matmul, formula");
  r.shape = kinds.at(shape);
  // value_exact: TOML integers only (toml++'s value<int64_t> would convert a float like 1e300).
  const int64_t input = t.contains("input") ? t["input"].value_exact<int64_t>().value_or(-1) : 0;
  if (input < 0) op_fail("input must be a whole number >= 0");
  r.input = static_cast<size_t>(input);
  if (auto dtype = t["dtype"].value<std::string>()) r.dtype = dtype_named(*dtype, op_fail);
  if (r.shape == ShapeKind::kFormula) {
    const toml::array* dims = t["dims"].as_array();
    if (!dims) op_fail("shape = \"formula\" needs dims = [\"in0[0]\", ...], one formula per output dim");
    for (const auto& d : *dims) {
      if (auto text = d.value<std::string>()) r.dims.push_back(formula("dims", *text));
      else if (auto n = d.value_exact<int64_t>()) r.dims.push_back(formula("dims", std::to_string(*n)));
      else op_fail("dims entries must be formulas (strings) or whole numbers");
    }
  }
  if (auto macs = t["macs"].value<std::string>()) r.macs = formula("macs", *macs);
  else if (auto n = t["macs"].value<double>()) r.macs = formula("macs", std::to_string(*n));
  if (auto flops = t["flops"].value<std::string>()) r.flops = formula("flops", *flops);
  r.flops_per_output = t["flops_per_output"].value_or(0.0);
  if (r.flops && t.contains("flops_per_output")) op_fail("give flops or flops_per_output, not both");
  if (!(r.flops_per_output >= 0) || !std::isfinite(r.flops_per_output)) op_fail("flops_per_output must be a finite number >= 0");
  return r;
}

// Rules files are a few KB; anything past this is not one (or is /dev/zero).
constexpr std::uintmax_t kMaxRulesFileBytes = 4 << 20;

// Regular files only, checked before opening: a FIFO would block and a device never end.
std::string read_text_file(const std::string& path) {
  auto fail = [&](const std::string& what) { throw Error(kExitUsage, "op rules file '" + path + "': " + what); };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("cannot read it");
  if (!fs::is_regular_file(status)) fail("not a regular file (a rules file or a folder of *.toml)");
  if (fs::file_size(path, ec) > kMaxRulesFileBytes || ec)
    fail("larger than " + std::to_string(kMaxRulesFileBytes >> 20) + " MB, not a rules file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read it");
  std::string text(kMaxRulesFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxRulesFileBytes) fail("larger than " + std::to_string(kMaxRulesFileBytes >> 20) + " MB, not a rules file");
  return text;
}

// A file, or every *.toml of a folder (in name order).
void load_path(const std::string& path, OpRegistry& registry) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    load_user_op_rules_text(read_text_file(path), path, registry);
    return;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.path().extension() == ".toml" && entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_user_op_rules_text(read_text_file(f.string()), f.string(), registry);
}

}  // namespace

void load_user_op_rules_text(const std::string& text, const std::string& origin, OpRegistry& registry) {
  auto fail = [&](const std::string& what) { throw Error(kExitUsage, "op rules file '" + origin + "': " + what); };
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    fail("line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  const toml::array* ops = root["op"].as_array();
  if (!ops) fail("no [[op]] tables");
  for (const auto& node : *ops) {
    const toml::table* t = node.as_table();
    if (!t) fail("[[op]] entries must be tables");
    const UserOpRule& rule = rule_store().emplace_back(read_rule(*t, fail));
    rule_table()[rule_key(rule.domain, rule.op_type)] = &rule;
    registry.add({rule.domain, rule.op_type, infer_user_op, cost_user_op});
  }
}

const OpRegistry& registry_with_user_rules(const std::vector<std::string>& files, bool read_environment) {
  std::vector<std::string> paths;
  if (const char* env = read_environment ? std::getenv("MODELCOST_OPS") : nullptr; env && *env) {
    std::string list(env);
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  paths.insert(paths.end(), files.begin(), files.end());  // --ops files come last and win
  if (paths.empty()) return OpRegistry::instance();
  // Registries handed out live as long as the process; the same files give the same registry.
  static std::map<std::vector<std::string>, OpRegistry> built;
  if (auto it = built.find(paths); it != built.end()) return it->second;
  OpRegistry registry = OpRegistry::instance();
  for (const auto& p : paths) load_path(p, registry);
  return built.emplace(paths, std::move(registry)).first->second;
}

}  // namespace modelcost
