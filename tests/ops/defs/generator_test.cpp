// Generator family: Constant, ConstantOfShape, Range, EyeLike, random ops. They read no float
// data; their small outputs are folded because they feed shape computations.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {
namespace {

onnx::TensorProto int64_tensor(const std::vector<int64_t>& values, const Shape& dims) {
  onnx::TensorProto t;
  t.set_data_type(kInt64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

onnx::TensorProto float_tensor(const std::vector<float>& values, const Shape& dims) {
  onnx::TensorProto t;
  t.set_data_type(kFloat);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

}  // namespace

TEST(GeneratorConstant, EveryValueAttributeForm) {
  ModelBuilder b(13);
  set_attr(b.node("Constant", {}, {"tensor"}), "value", float_tensor({1, 2, 3, 4, 5, 6}, {2, 3}));
  set_attr(b.node("Constant", {}, {"scalar_float"}), "value_float", 2.5f);
  set_attr(b.node("Constant", {}, {"scalar_int"}), "value_int", int64_t{7});
  set_attr(b.node("Constant", {}, {"floats"}), "value_floats", std::vector<float>{0.5f, 1.5f});
  set_attr(b.node("Constant", {}, {"ints"}), "value_ints", std::vector<int64_t>{3, -1, 4});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("tensor"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("tensor").dtype, kFloat);
  ASSERT_TRUE(run->tensor("tensor").value);
  EXPECT_EQ(run->tensor("tensor").value->floats, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(run->shape("scalar_float"), (Shape{}));
  EXPECT_EQ(run->tensor("scalar_float").value->floats, (std::vector<double>{2.5}));
  EXPECT_EQ(run->tensor("scalar_int").dtype, kInt64);
  EXPECT_EQ(run->tensor("scalar_int").value->ints, (std::vector<int64_t>{7}));
  EXPECT_EQ(run->shape("floats"), (Shape{2}));
  EXPECT_EQ(run->shape("ints"), (Shape{3}));
  EXPECT_EQ(run->tensor("ints").value->ints, (std::vector<int64_t>{3, -1, 4}));
  // A Constant reads nothing and writes its output.
  const NodeCost& c = run->cost("tensor");
  EXPECT_TRUE(c.known);
  EXPECT_DOUBLE_EQ(c.macs, 0);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.params, 0);
  EXPECT_DOUBLE_EQ(c.bytes_read, 0);
  EXPECT_DOUBLE_EQ(c.bytes_written, 6 * 4);
  EXPECT_DOUBLE_EQ(run->cost("ints").bytes_written, 3 * 8);
}

TEST(GeneratorConstant, MissingValueIsAnError) {
  ModelBuilder b(13);
  b.node("Constant", {}, {"empty"});
  expect_node_error(b, "empty", "Constant has no value attribute");
}

TEST(GeneratorConstantOfShape, FillValueAndDefault) {
  ModelBuilder b(17);
  b.ints("shape", {2, 3}).ints("no_dims", {}, {0});
  set_attr(b.node("ConstantOfShape", {"shape"}, {"sevens"}), "value", int64_tensor({7}, {1}));
  b.node("ConstantOfShape", {"shape"}, {"zeros"});
  b.node("ConstantOfShape", {"no_dims"}, {"scalar"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("sevens"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("sevens").dtype, kInt64);
  EXPECT_EQ(run->tensor("sevens").value->ints, (std::vector<int64_t>(6, 7)));
  EXPECT_EQ(run->tensor("zeros").dtype, kFloat);  // default: float 0
  EXPECT_EQ(run->tensor("zeros").value->floats, (std::vector<double>(6, 0.0)));
  EXPECT_EQ(run->shape("scalar"), (Shape{}));    // an empty shape gives a scalar
  const NodeCost& c = run->cost("sevens");
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.bytes_read, 2 * 8);  // the shape tensor
  EXPECT_DOUBLE_EQ(c.bytes_written, 6 * 8);
  EXPECT_DOUBLE_EQ(run->cost("zeros").bytes_written, 6 * 4);
}

TEST(GeneratorConstantOfShape, UnknownShapeLeavesTheOutputToTheFile) {
  ModelBuilder b(17);
  b.input("shape", kInt64, Shape{2});
  b.node("ConstantOfShape", {"shape"}, {"filled"});
  b.value_info("filled", kFloat, Shape{4, 5});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("filled"), (Shape{4, 5}));  // the declared shape
  EXPECT_EQ(run->tensor("filled").value, nullptr);
}

TEST(GeneratorRange, IntegerFloatAndNegativeDelta) {
  ModelBuilder b(17);
  b.ints("zero", {0}, {}).ints("ten", {10}, {}).ints("three", {3}, {}).ints("minus_three", {-3}, {});
  b.floats("f0", {0.f}, {}).floats("f1", {1.f}, {}).floats("quarter", {0.25f}, {});
  b.node("Range", {"zero", "ten", "three"}, {"up"});
  b.node("Range", {"ten", "zero", "minus_three"}, {"down"});
  b.node("Range", {"f0", "f1", "quarter"}, {"fractions"});
  b.node("Range", {"ten", "zero", "three"}, {"empty"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("up"), (Shape{4}));
  EXPECT_EQ(run->tensor("up").dtype, kInt64);
  EXPECT_EQ(run->tensor("up").value->ints, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_DOUBLE_EQ(run->cost("up").flops, 0);  // integer arithmetic
  EXPECT_DOUBLE_EQ(run->cost("up").bytes_read, 3 * 8);
  EXPECT_DOUBLE_EQ(run->cost("up").bytes_written, 4 * 8);
  EXPECT_EQ(run->tensor("down").value->ints, (std::vector<int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(run->shape("fractions"), (Shape{4}));
  EXPECT_EQ(run->tensor("fractions").value->floats, (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_DOUBLE_EQ(run->cost("fractions").flops, 4);  // one multiply-add per element
  EXPECT_EQ(run->shape("empty"), (Shape{0}));
}

TEST(GeneratorRange, ZeroDeltaIsAnError) {
  ModelBuilder b(17);
  b.ints("zero", {0}, {}).ints("ten", {10}, {});
  b.node("Range", {"zero", "ten", "zero"}, {"stuck"});
  expect_node_error(b, "stuck", "delta is 0");
  ModelBuilder nan(17);
  nan.floats("zero", {0.f}, {}).floats("limit", {std::nanf("")}, {}).floats("one", {1.f}, {});
  nan.node("Range", {"zero", "limit", "one"}, {"endless"});
  expect_node_error(nan, "endless", "has no finite length");
}

TEST(GeneratorEyeLike, DtypeAttributeOrInputDtype) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 4});
  set_attr(b.node("EyeLike", {"x"}, {"as_int"}), "dtype", int64_t{kInt64});
  b.node("EyeLike", {"x"}, {"same"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("as_int"), (Shape{3, 4}));
  EXPECT_EQ(run->tensor("as_int").dtype, kInt64);
  EXPECT_EQ(run->tensor("same").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("same").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("as_int").bytes_read, 12 * 4);
  EXPECT_DOUBLE_EQ(run->cost("as_int").bytes_written, 12 * 8);
}

TEST(GeneratorRandom, TwoFlopsPerGeneratedElement) {
  ModelBuilder b(17);
  b.input("like", kFloat16, Shape{4, 5}).input("probs", kFloat, Shape{2, 10});
  auto& normal = b.node("RandomNormal", {}, {"normal"});
  set_attr(normal, "shape", std::vector<int64_t>{2, 3});
  auto& uniform = b.node("RandomUniform", {}, {"uniform"});
  set_attr(uniform, "shape", std::vector<int64_t>{2, 3});
  set_attr(uniform, "dtype", int64_t{onnx::TensorProto::DOUBLE});
  b.node("RandomNormalLike", {"like"}, {"normal_like"});
  set_attr(b.node("RandomUniformLike", {"like"}, {"uniform_like"}), "dtype", int64_t{kFloat});
  b.node("Bernoulli", {"probs"}, {"coin"});
  set_attr(b.node("Multinomial", {"probs"}, {"draws"}), "sample_size", int64_t{3});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("normal"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("normal").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("normal").flops, 12);
  EXPECT_DOUBLE_EQ(run->cost("normal").bytes_read, 0);
  EXPECT_DOUBLE_EQ(run->cost("normal").bytes_written, 6 * 4);
  EXPECT_EQ(run->tensor("uniform").dtype, onnx::TensorProto::DOUBLE);
  EXPECT_DOUBLE_EQ(run->cost("uniform").flops, 12);
  EXPECT_DOUBLE_EQ(run->cost("uniform").bytes_written, 6 * 8);
  EXPECT_EQ(run->shape("normal_like"), (Shape{4, 5}));
  EXPECT_EQ(run->tensor("normal_like").dtype, kFloat16);
  EXPECT_DOUBLE_EQ(run->cost("normal_like").flops, 40);
  EXPECT_DOUBLE_EQ(run->cost("normal_like").bytes_read, 20 * 2);
  EXPECT_EQ(run->tensor("uniform_like").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("uniform_like").flops, 40);
  EXPECT_DOUBLE_EQ(run->cost("uniform_like").bytes_written, 20 * 4);
  EXPECT_EQ(run->shape("coin"), (Shape{2, 10}));
  EXPECT_EQ(run->tensor("coin").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("coin").flops, 40);
  EXPECT_EQ(run->shape("draws"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("draws").dtype, kInt32);
  EXPECT_DOUBLE_EQ(run->cost("draws").flops, 12);
  EXPECT_DOUBLE_EQ(run->cost("draws").bytes_written, 6 * 4);
}

}  // namespace modelcost::testing
