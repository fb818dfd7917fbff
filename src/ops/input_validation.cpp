#include "ops/input_validation.h"

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>

#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

// Highest element type ONNX 1.12's type tables name (BFLOAT16); newer ones (float8, int4) are
// not checked against its constraints.
constexpr int32_t kLastLibraryDtype = onnx::TensorProto::BFLOAT16;

std::string count_text(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

void check_count(const OpContext& c, size_t n, int min, int max, bool check_max, const char* what) {
  if (static_cast<int64_t>(n) < min)
    c.fail("has " + count_text(n, what) + ", needs at least " + std::to_string(min));
  if (check_max && max >= 0 && static_cast<int64_t>(n) > max)
    c.fail("has " + count_text(n, what) + ", takes at most " + std::to_string(max));
}

// Whether every type a formal parameter allows is a plain tensor type (sequences and optionals
// are represented here by their element, so their constraints cannot be checked this way).
bool tensor_types_only(const onnx::OpSchema::FormalParameter& formal) {
  for (const auto* type : formal.GetTypes())
    if (type->rfind("tensor(", 0) != 0) return false;
  return !formal.GetTypes().empty();
}

bool allowed(const onnx::OpSchema::FormalParameter& formal, int32_t dtype) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(dtype);
  return formal.GetTypes().count(onnx::Utils::DataTypeUtils::ToType(type)) > 0;
}

// The first input whose element type the schema does not allow, or that disagrees with another
// input of the same type constraint; empty when there is none.
std::string input_type_problem(const OpContext& c, const onnx::OpSchema& schema, bool exact) {
  const auto& formals = schema.inputs();
  if (formals.empty()) return {};
  std::map<std::string, std::pair<int32_t, size_t>> bound;  // type constraint -> dtype, first input
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i) || !c.in(i).has_shape) continue;
    const int32_t dtype = c.in_dtype(i);
    if (dtype <= 0 || dtype > kLastLibraryDtype) continue;
    const bool past_end = i >= formals.size();
    const auto& formal = formals[std::min(i, formals.size() - 1)];
    if (past_end && formal.GetOption() != onnx::OpSchema::Variadic) continue;
    if (!tensor_types_only(formal)) continue;
    if (exact && !allowed(formal, dtype))
      return "input " + std::to_string(i) + " is " + dtype_name(dtype) + ", which the ONNX schema does not allow there";
    if (formal.GetOption() == onnx::OpSchema::Variadic && !formal.GetIsHomogeneous()) continue;
    auto [it, fresh] = bound.emplace(formal.GetTypeStr(), std::make_pair(dtype, i));
    if (!fresh && it->second.first != dtype)
      return "inputs " + std::to_string(it->second.second) + " and " + std::to_string(i) + " should share one type (" +
             dtype_name(it->second.first) + " and " + dtype_name(dtype) + ")";
  }
  return {};
}

// An attribute of another type than the schema declares would be read as absent (its default):
// a wrong answer, so an error. Attributes without a type (very old files) are not checked.
void check_attribute_types(const OpContext& c, const onnx::OpSchema& schema) {
  for (const auto& a : c.node().proto->attribute()) {
    if (a.type() == onnx::AttributeProto::UNDEFINED) continue;
    auto it = schema.attributes().find(a.name());
    if (it == schema.attributes().end() || it->second.type == a.type()) continue;
    c.fail("attribute " + a.name() + " is " + onnx::AttributeProto::AttributeType_Name(a.type()) + ", not " +
           onnx::AttributeProto::AttributeType_Name(it->second.type));
  }
}

}  // namespace

void validate_node(const OpContext& c, const OpRule& rule) {
  const Node& n = c.node();
  const bool standard = is_standard_domain(n.domain);
  const int version = standard ? std::min(n.opset, kOnnxLibraryMaxOpset) : n.opset;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type, version, standard ? "" : n.domain);
  if (!schema) {
    // A standard op of an opset newer than the op table knows may have gained inputs.
    if (!rule.arity) return;
    const bool check_max = !standard || n.opset <= kMaxKnownOnnxOpset;
    check_count(c, c.num_inputs(), rule.arity->min_inputs, rule.arity->max_inputs, check_max, "input");
    check_count(c, c.num_outputs(), rule.arity->min_outputs, rule.arity->max_outputs, check_max, "output");
    return;
  }
  // The library's schema is the node's own up to its last opset; past it, only what newer
  // opsets never loosen is checked.
  const bool exact = !standard || n.opset <= kOnnxLibraryMaxOpset;
  check_count(c, c.num_inputs(), schema->min_input(), schema->max_input(), exact, "input");
  check_count(c, c.num_outputs(), schema->min_output(), schema->max_output(), exact, "output");
  check_attribute_types(c, *schema);
  // Rules work on any element type; a mismatch is reported, not refused (exporters bend them).
  if (const std::string problem = input_type_problem(c, *schema, exact); !problem.empty())
    c.diagnostics().warn_counted(n.op_type + ": inputs of types its ONNX schema does not take (analysed as given)",
                                 n.name + ": " + problem);
}

}  // namespace modelcost
