// Fallback shape rule: hands the node, with concrete input types and any known input contents,
// to ONNX 1.12's own per-op inference function.
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>

#include "ops/op_registry.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

// Ranks past numpy's limit of 64 are refused by our own rules too.
constexpr int64_t kMaxRank = 64;

// A 1-D input longer than any rank cannot be a shape, but ONNX's inference for ConstantOfShape,
// Expand and the like would build one dim per element whatever the element type (a fuzzed int16
// shape of 10^10 elements, one of an element type ONNX does not define, a complex128 one): its
// length is passed as unknown, so the output's rank stays unknown instead of 10^10 dims. Where
// ONNX's inference is the op's own rule (DFT, the window functions, TfIdfVectorizer, ...) or the
// op has no rule, element types that are surely not integers keep their length: a long signal
// is no shape there.
bool is_overlong_shape_like(const TensorInfo& t, bool schema_is_the_rule) {
  using T = onnx::TensorProto;
  const bool surely_not_integer = t.dtype == T::FLOAT || t.dtype == T::DOUBLE || t.dtype == T::FLOAT16 ||
                                  t.dtype == T::BFLOAT16 || t.dtype == T::COMPLEX64 || t.dtype == T::COMPLEX128 ||
                                  t.dtype == T::BOOL || t.dtype == T::STRING;
  return !(schema_is_the_rule && surely_not_integer) && t.shape.size() == 1 && t.shape[0] > kMaxRank;
}

onnx::TypeProto tensor_type(const TensorInfo& t, bool schema_is_the_rule) {
  onnx::TypeProto type;
  auto* tt = type.mutable_tensor_type();
  tt->set_elem_type(t.dtype);
  if (t.has_shape) {
    auto* shape = tt->mutable_shape();
    const bool hide_length = is_overlong_shape_like(t, schema_is_the_rule);
    for (int64_t d : t.shape) {
      auto* dim = shape->add_dim();
      if (!hide_length) dim->set_dim_value(d);
    }
  }
  return type;
}

onnx::TensorProto value_proto(const TensorInfo& t) {
  onnx::TensorProto p;
  p.set_data_type(t.dtype);
  for (int64_t d : t.shape) p.add_dims(d);
  const TensorValue& v = *t.value;
  if (t.dtype == onnx::TensorProto::FLOAT) for (size_t i = 0; i < v.size(); ++i) p.add_float_data(static_cast<float>(v.as_double(i)));
  else if (t.dtype == onnx::TensorProto::DOUBLE) for (size_t i = 0; i < v.size(); ++i) p.add_double_data(v.as_double(i));
  else if (t.dtype == onnx::TensorProto::INT64) for (size_t i = 0; i < v.size(); ++i) p.add_int64_data(v.as_int(i));
  else for (size_t i = 0; i < v.size(); ++i) p.add_int32_data(static_cast<int32_t>(v.as_int(i)));
  return p;
}

class NodeInferenceContext final : public onnx::InferenceContext {
 public:
  explicit NodeInferenceContext(const OpContext& c) : c_(c) {
    const OpRule* rule = OpRegistry::instance().find(c.node().domain, c.node().op_type);
    const bool schema_is_the_rule = !rule || rule->infer == infer_with_onnx_schema;
    for (size_t i = 0; i < c.num_inputs(); ++i) {
      input_types_.push_back(c.has_input(i) ? tensor_type(c.in(i), schema_is_the_rule) : onnx::TypeProto());
      const bool known = c.has_input(i) && c.value(i) && c.in(i).has_shape;
      input_data_.push_back(known ? std::make_unique<onnx::TensorProto>(value_proto(c.in(i))) : nullptr);
    }
    output_types_.resize(c.num_outputs());
  }
  const onnx::AttributeProto* getAttribute(const std::string& name) const override { return c_.attr(name.c_str()); }
  size_t getNumInputs() const override { return input_types_.size(); }
  // ONNX's inference functions ask for inputs and outputs by the schema's positions, which a
  // malformed node may not have: every index is checked.
  const onnx::TypeProto* getInputType(size_t i) const override {
    return c_.has_input(i) ? &input_types_[i] : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return i < input_data_.size() ? input_data_[i].get() : nullptr;
  }
  size_t getNumOutputs() const override { return output_types_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override {
    if (i >= output_types_.size()) throw std::out_of_range("output " + std::to_string(i) + " is missing");
    return &output_types_[i];
  }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override { return nullptr; }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }

  const onnx::TypeProto& output(size_t i) const { return output_types_[i]; }

 private:
  const OpContext& c_;
  std::vector<onnx::TypeProto> input_types_;
  std::vector<std::unique_ptr<onnx::TensorProto>> input_data_;
  std::vector<onnx::TypeProto> output_types_;
};

}  // namespace

void infer_with_onnx_schema(OpContext& c) {
  const std::string domain = c.node().domain;
  const int version = domain.empty() ? std::min(c.opset(), kOnnxLibraryMaxOpset) : c.opset();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(c.node().op_type, version, domain);
  if (!schema || !schema->has_type_and_shape_inference_function()) return;
  NodeInferenceContext ctx(c);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    c.diagnostics().warn_counted("ONNX shape inference failed for " + c.node().op_type, c.node().name + ": " + e.what());
    return;
  }
  for (size_t i = 0; i < c.num_outputs(); ++i) {
    if (!c.has_output(i)) continue;
    const auto& type = ctx.output(i);
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) continue;
    if (type.tensor_type().shape().dim_size() > kMaxRank) c.fail("ONNX's shape inference gives a rank over 64");
    Shape shape;
    bool concrete = true;
    for (const auto& d : type.tensor_type().shape().dim()) {
      if (!d.has_dim_value()) { concrete = false; break; }
      shape.push_back(d.dim_value());
    }
    if (!concrete) continue;
    const int32_t dtype = type.tensor_type().elem_type() ? type.tensor_type().elem_type() : c.in_dtype(0);
    c.set_output(i, dtype, std::move(shape));
  }
}

}  // namespace modelcost
