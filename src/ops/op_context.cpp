#include "ops/op_context.h"

#include <onnx/onnx_pb.h>

#include "ops/rule_helpers.h"

namespace modelcost {

const TensorInfo& OpContext::in(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return graph_.tensors[node_.inputs[i]];
}

const TensorValue* OpContext::value(size_t i) const {
  if (!has_input(i)) return nullptr;
  return graph_.tensors[node_.inputs[i]].value.get();
}

std::vector<int64_t> OpContext::require_ints(size_t i, const char* what) const {
  const TensorValue* v = value(i);
  if (!v) throw NotInferable(std::string(what) + " (input " + std::to_string(i) + ") is not known at analysis time");
  return value_as_ints(*v);
}

const TensorInfo& OpContext::out(size_t i) const {
  if (!has_output(i)) fail("output " + std::to_string(i) + " is missing");
  return graph_.tensors[node_.outputs[i]];
}

TensorInfo& OpContext::out(size_t i) {
  if (!has_output(i)) fail("output " + std::to_string(i) + " is missing");
  return graph_.tensors[node_.outputs[i]];
}

void OpContext::set_output(size_t i, int32_t dtype, Shape shape, bool estimate) {
  if (!has_output(i)) return;
  if (const std::string bad = shape_limit_violation(shape); !bad.empty())
    fail("output " + std::to_string(i) + " would be " + bad);
  TensorInfo& t = graph_.tensors[node_.outputs[i]];
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.has_shape = true;
  t.estimate = estimate || any_input_estimate();
}

void OpContext::set_value(size_t i, TensorValue value) {
  if (!has_output(i) || !may_fold(static_cast<double>(value.size()))) return;
  if (engine_) engine_->charge_fold(static_cast<double>(value.size()));
  graph_.tensors[node_.outputs[i]].value = std::make_shared<const TensorValue>(std::move(value));
}

void OpContext::set_value(size_t i, std::shared_ptr<const TensorValue> value) {
  if (has_output(i)) graph_.tensors[node_.outputs[i]].value = std::move(value);
}

std::shared_ptr<const TensorValue> OpContext::shared_value(size_t i) const {
  return has_input(i) ? graph_.tensors[node_.inputs[i]].value : nullptr;
}

bool OpContext::may_fold(double elements) const {
  return elements <= static_cast<double>(kMaxFoldedElements) && (!engine_ || engine_->may_fold(elements));
}

bool OpContext::any_input_estimate() const {
  for (int t : node_.inputs)
    if (t >= 0 && graph_.tensors[t].estimate) return true;
  return false;
}

const onnx::AttributeProto* OpContext::attr(const char* name) const {
  for (const auto& a : node_.proto->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t OpContext::attr_int(const char* name, int64_t fallback) const {
  const auto* a = attr(name);
  return a ? a->i() : fallback;
}

float OpContext::attr_float(const char* name, float fallback) const {
  const auto* a = attr(name);
  return a ? a->f() : fallback;
}

std::string OpContext::attr_string(const char* name, const std::string& fallback) const {
  const auto* a = attr(name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> OpContext::attr_ints(const char* name) const {
  const auto* a = attr(name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> OpContext::attr_floats(const char* name) const {
  const auto* a = attr(name);
  if (!a) return {};
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

int64_t OpContext::axis(int64_t axis, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

void OpContext::fail(const std::string& message) const { throw NodeError(node_.name, node_.op_type, message); }

}  // namespace modelcost
