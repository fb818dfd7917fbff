// Every op of the ONNX standard domain has a rule: all of ONNX 1.12's ai.onnx schemas, plus the
// ops added in opsets 18-24, ONNX 1.13-1.19 (which ONNX 1.12 does not know).
#include "ops/op_registry.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <set>

namespace modelcost {

TEST(OpRegistry, EveryOnnxStandardOpHasAShapeAndACostRule) {
  const OpRegistry& r = OpRegistry::instance();
  std::set<std::string> missing;
  for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty() || schema.Deprecated()) continue;
    const OpRule* rule = r.find("", schema.Name());
    if (!rule || !rule->infer || !rule->cost) missing.insert(schema.Name());
  }
  EXPECT_TRUE(missing.empty()) << [&] {
    std::string s;
    for (const auto& m : missing) s += m + " ";
    return s;
  }();
}

// Measurement coverage as a property of the table: each standard op's row names the builder of
// its measured kind, or the reason no node of it is measured.
TEST(OpRegistry, EveryStandardOpNamesAPlanOrWhyItIsNotMeasured) {
  std::string unnamed;
  size_t planned = 0, named = 0;
  for (const OpRule* rule : OpRegistry::instance().all()) {
    if (!is_standard_domain(rule->domain)) continue;
    if (rule->measure.plan) ++planned;
    else if (!rule->measure.reason.empty()) ++named;
    else unnamed += std::string(rule->op_type) + " ";
  }
  EXPECT_TRUE(unnamed.empty()) << "standard ops with neither a plan builder nor a named reason: " << unnamed;
  EXPECT_GT(planned, named);
}

// Nodes are checked before their rule runs: against ONNX's schema where the library here has one,
// else against the arity the row declares.
TEST(OpRegistry, EveryRuleWithoutAnOnnxSchemaDeclaresItsArity) {
  std::set<std::string> undeclared;
  for (const OpRule* rule : OpRegistry::instance().all()) {
    const std::string domain(is_standard_domain(rule->domain) ? "" : rule->domain);
    const std::string op(rule->op_type);
    if (onnx::OpSchemaRegistry::Schema(op, domain)) continue;
    if (!rule->arity) undeclared.insert(domain + "::" + op);
    else EXPECT_LE(rule->arity->min_inputs, rule->arity->max_inputs == kNoLimit ? INT32_MAX : rule->arity->max_inputs) << op;
  }
  EXPECT_TRUE(undeclared.empty()) << [&] {
    std::string s;
    for (const auto& m : undeclared) s += m + " ";
    return s;
  }();
}

TEST(OpRegistry, OpsAddedAfterOnnx112HaveRules) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"GroupNormalization", "Col2Im", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
                         "CenterCropPad", "Mish", "DeformConv", "AffineGrid", "Gelu", "ImageDecoder", "RegexFullMatch",
                         "StringConcat", "StringSplit", "IsInf", "IsNaN",
                         // opset 23 (ONNX 1.18), opset 24 (ONNX 1.19), then CumProd of opset 26
                         "Attention", "RMSNormalization", "RotaryEmbedding", "Swish", "TensorScatter", "CumProd"}) {
    const OpRule* rule = r.find("", op);
    ASSERT_NE(rule, nullptr) << op;
    EXPECT_NE(rule->infer, nullptr) << op;
    EXPECT_NE(rule->cost, nullptr) << op;
  }
}

TEST(OpRegistry, ComMicrosoftOpsThatExportersEmitHaveRules) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"FusedConv", "FusedMatMul", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "SkipLayerNormalization",
                         "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "Attention",
                         "MultiHeadAttention", "GroupQueryAttention", "RotaryEmbedding", "MatMulNBits", "QLinearConv",
                         "QLinearAdd", "QLinearMatMul", "QGemm"}) {
    const OpRule* rule = r.find("com.microsoft", op);
    if (!rule) rule = r.find("", op);  // QLinearConv/QLinearMatMul are standard ops
    ASSERT_NE(rule, nullptr) << op;
    EXPECT_NE(rule->cost, nullptr) << op;
  }
}

TEST(OpRegistry, EveryOnnxMlOpHasAShapeAndACostRule) {
  const OpRegistry& r = OpRegistry::instance();
  std::set<std::string> missing;
  for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (schema.domain() != "ai.onnx.ml" || schema.Deprecated()) continue;
    const OpRule* rule = r.find("ai.onnx.ml", schema.Name());
    if (!rule || !rule->infer || !rule->cost) missing.insert(schema.Name());
  }
  for (const char* op : {"Scaler", "TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble", "ZipMap",
                         "LinearClassifier"})
    if (!r.find("ai.onnx.ml", op)) missing.insert(op);
  EXPECT_TRUE(missing.empty()) << [&] {
    std::string s;
    for (const auto& m : missing) s += m + " ";
    return s;
  }();
}

TEST(OpRegistry, OnnxRuntimeContribOpsOfOptimizedAndQuantizedSavesHaveRules) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"QEmbedLayerNormalization", "QAttention", "DynamicQuantizeLSTM", "QLinearSoftmax",
                         "QLinearAveragePool", "QLinearConcat", "QLinearWhere", "QLinearReduceMean", "MatMulNBits",
                         "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QLinearGlobalAveragePool"})
    EXPECT_NE(r.find("com.microsoft", op), nullptr) << op;
  for (const char* op : {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReorderInput",
                         "ReorderOutput", "Upsample"})
    EXPECT_NE(r.find("com.microsoft.nchwc", op), nullptr) << op;
}

TEST(OpRegistry, DomainSpellingsOfTheStandardDomainAgree) {
  const OpRegistry& r = OpRegistry::instance();
  EXPECT_EQ(r.find("ai.onnx", "Conv"), r.find("", "Conv"));
  EXPECT_EQ(r.find("", "NoSuchOp"), nullptr);
}

// The rule row is an op's one record: every built-in rule declares the form of kernel it runs as,
// which fusion, the roofline, the LLM recogniser and measurement read.
// Each named trait belongs to one form: a view or a permutation is a layout move, an epilogue op
// pointwise, a transposed conv a conv.
TEST(OpRegistry, EveryRuleDeclaresItsTraits) {
  for (const OpRule* rule : OpRegistry::instance().all()) {
    const OpTraits& t = rule->traits;
    const std::string op = std::string(rule->domain) + "::" + std::string(rule->op_type);
    EXPECT_NE(t.form, OpForm::kUnset) << op << " has no traits";
    if (t.integer_math) EXPECT_TRUE(t.matrix()) << op << ": integer math names a product's peak";
    if (t.view || t.permutation || t.repeat) EXPECT_EQ(t.form, OpForm::kLayout) << op;
    if (t.view) EXPECT_FALSE(t.permutation || t.repeat) << op << ": a view moves no data";
    if (t.conversion || t.conv_epilogue) EXPECT_EQ(t.form, OpForm::kPointwise) << op;
    if (t.stored_statistics) EXPECT_TRUE(t.conv_epilogue) << op << ": folds into a conv";
    if (t.transposed_conv) EXPECT_EQ(t.form, OpForm::kConv) << op;
    if (t.free_dim_order) EXPECT_EQ(t.form, OpForm::kGemm) << op;
  }
}

// The standard ops that carry a trait: what measurement aliases, what folds into an operand's
// layout, what a library conv call takes in its epilogue.
std::set<std::string> ops_where(bool (*has)(const OpTraits&)) {
  std::set<std::string> found;
  for (const OpRule* rule : OpRegistry::instance().all())
    if (has(rule->traits)) found.insert((rule->domain.empty() ? "" : std::string(rule->domain) + "::") + std::string(rule->op_type));
  return found;
}

TEST(OpRegistry, NamedTraitsCoverTheirOps) {
  using Set = std::set<std::string>;
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.view; }),
            (Set{"Dropout", "Flatten", "Identity", "Reshape", "Squeeze", "Unsqueeze"}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.folds_into_operand(); }),
            (Set{"Dropout", "Flatten", "Identity", "Reshape", "Squeeze", "Transpose", "Unsqueeze"}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.keeps_values(); }),
            (Set{"Cast", "CastLike", "Dropout", "Expand", "Flatten", "Identity", "Reshape", "Squeeze", "Tile",
                 "Transpose", "Unsqueeze"}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.conv_epilogue; }),
            (Set{"Add", "BatchNormalization", "Mul", "Relu", "Sub"}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.stored_statistics; }), Set{"BatchNormalization"});
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.transposed_conv; }), Set{"ConvTranspose"});
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.free_dim_order; }), Set{"Einsum"});
}

TEST(OpRegistry, TraitsBuildByName) {
  constexpr OpTraits t = OpTraits(OpForm::kLayout).with_permutation();
  static_assert(t.form == OpForm::kLayout && t.permutation && !t.view, "a setter sets its trait alone");
  EXPECT_TRUE(t.folds_into_operand());
  EXPECT_FALSE(OpTraits(OpForm::kLayout).folds_into_operand());
  EXPECT_TRUE(OpTraits(OpForm::kPointwise).with_conversion().keeps_values());
}

TEST(OpRegistry, FusedAndSpelledOutFormsShareTheirTraits) {
  EXPECT_EQ(op_traits("com.microsoft", "FusedConv").form, OpForm::kConv);
  EXPECT_EQ(op_traits("", "Conv").form, OpForm::kConv);
  EXPECT_EQ(op_traits("com.microsoft", "SkipLayerNormalization").form, OpForm::kNorm);
  EXPECT_EQ(op_traits("", "LayerNormalization").form, OpForm::kNorm);
  EXPECT_EQ(op_traits("com.microsoft", "FusedMatMul").form, OpForm::kGemm);
  EXPECT_EQ(op_traits("com.microsoft", "GroupQueryAttention").form, OpForm::kAttention);
  EXPECT_TRUE(op_traits("", "QLinearConv").integer_math);
  EXPECT_FALSE(op_traits("", "Conv").integer_math);
  EXPECT_EQ(op_traits("", "NoSuchOp").form, OpForm::kUnset);
  EXPECT_TRUE(op_traits("", "Reshape").view);
  EXPECT_TRUE(op_traits("ai.onnx", "Unsqueeze").view);
  EXPECT_FALSE(op_traits("", "Transpose").view);  // a layout change that moves data
  EXPECT_TRUE(op_traits("", "Transpose").permutation);
  EXPECT_TRUE(op_traits("", "Dropout").view);  // inference Dropout: the identity
}

}  // namespace modelcost
