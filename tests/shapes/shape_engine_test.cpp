#include "shapes/shape_engine.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

bool has_warning(const AnalysisRun& run, const std::string& text) {
  for (const auto& w : run.analysis.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(ShapeEngine, SymbolicDimsComeFromOptions) {
  ModelBuilder b;
  b.input("ids", kFloat, std::vector<std::string>{"batch", "seq", "64"});
  b.node("Relu", {"ids"}, {"y"});
  b.output("y");
  ShapeOptions options;
  options.dims = {{"batch", 4}, {"seq", 128}};
  auto run = analyse(b, options);
  EXPECT_EQ(run->shape("y"), (Shape{4, 128, 64}));
  EXPECT_FALSE(has_warning(*run, "not set"));
}

TEST(ShapeEngine, UnsetSymbolicDimsDefaultToOneWithAWarningNamingThem) {
  ModelBuilder b;
  b.input("ids", kFloat, std::vector<std::string>{"batch", "seq"});
  b.node("Relu", {"ids"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{1, 1}));
  EXPECT_TRUE(has_warning(*run, "batch, seq"));
}

TEST(ShapeEngine, WholeInputShapeFromOptions) {
  ModelBuilder b;
  b.input("x", kFloat, std::vector<std::string>{"n", "3"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  ShapeOptions options;
  options.inputs = {{"x", {7, 3}}};
  EXPECT_EQ(analyse(b, options)->shape("y"), (Shape{7, 3}));
  options.inputs = {{"nope", {7, 3}}};
  try {
    analyse(b, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("inputs: x"), std::string::npos) << e.what();
  }
}

TEST(ShapeEngine, NegativeInputDimIsAnError) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, -3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THROW(analyse(b), Error);
}

TEST(ShapeEngine, FoldsTorchScriptShapeChains) {
  // x:[batch, 12, 64] -> Reshape(x, Concat(Gather(Shape(x), 0), [-1])) == [batch, 768]
  ModelBuilder b;
  b.input("x", kFloat, std::vector<std::string>{"batch", "12", "64"});
  b.ints("zero", {0}, {});
  b.ints("minus_one", {-1});
  b.ints("axes0", {0});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"b"});
  b.node("Unsqueeze", {"b", "axes0"}, {"b1"});
  set_attr(b.node("Concat", {"b1", "minus_one"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  ShapeOptions options;
  options.dims = {{"batch", 5}};
  auto run = analyse(b, options);
  EXPECT_EQ(run->shape("y"), (Shape{5, 768}));
  ASSERT_NE(run->tensor("target").value, nullptr);
  EXPECT_EQ(run->tensor("target").value->ints, (std::vector<int64_t>{5, -1}));
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
}

TEST(ShapeEngine, UnknownOpKeepsDeclaredShapesAndIsCountedInOneWarning) {
  ModelBuilder b;
  b.opset("my.domain", 1);
  b.input("x", kFloat, Shape{2, 3});
  b.node("Mystery", {"x"}, {"m1"}, "my.domain");
  b.node("Mystery", {"m1"}, {"m2"}, "my.domain");
  b.node("Relu", {"m2"}, {"y"});
  b.value_info("m1", kFloat, {2, 3});
  b.value_info("m2", kFloat, {6});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{6}));
  EXPECT_FALSE(run->cost("m1").known);
  EXPECT_TRUE(run->cost("y").known);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 2u);
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
  EXPECT_TRUE(has_warning(*run, "unknown op my.domain.Mystery"));
  EXPECT_TRUE(has_warning(*run, "(2 nodes"));
}

TEST(ShapeEngine, RuntimeReshapeTargetFallsBackToDeclaredShape) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 6});
  b.input("target", kInt64, Shape{2});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.value_info("y", kFloat, {3, 4});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{3, 4}));
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
}

TEST(ShapeEngine, UnresolvableShapeIsCountedAsUnshaped) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 6});
  b.input("target", kInt64, Shape{2});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto run = analyse(b);
  EXPECT_FALSE(run->tensor("y").has_shape);
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 2u);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 2u);
}

}  // namespace modelcost::testing
