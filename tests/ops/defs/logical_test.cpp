// Logical family: comparisons (one flop per element on floats), boolean and bitwise ops (no
// floating-point work), IsNaN/IsInf, and folding of known values (shape computations).
#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// An inline initializer of a non-int64 integer dtype (bool, int32, uint8): values in int32_data.
void int32_initializer(ModelBuilder& b, const std::string& name, int32_t dtype, const std::vector<int32_t>& values) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int32_t v : values) t->add_int32_data(v);
}

std::vector<int64_t> folded(const AnalysisRun& run, const std::string& tensor) {
  const auto& value = run.tensor(tensor).value;
  return value ? value->ints : std::vector<int64_t>{};
}

}  // namespace

TEST(LogicalCompare, FloatComparisonsCountOneFlopAndWriteBool) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3}).input("y", kFloat, Shape{3});
  const char* ops[] = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"};
  for (const char* op : ops) b.node(op, {"x", "y"}, {op});
  auto run = analyse(b);
  for (const char* op : ops) {
    EXPECT_EQ(run->shape(op), (Shape{2, 3})) << op;
    EXPECT_EQ(run->tensor(op).dtype, kBool) << op;
    const NodeCost& c = run->cost(op);
    EXPECT_DOUBLE_EQ(c.macs, 0) << op;
    EXPECT_DOUBLE_EQ(c.flops, 6) << op;
    EXPECT_DOUBLE_EQ(c.bytes_read, (6 + 3) * 4) << op;
    EXPECT_DOUBLE_EQ(c.bytes_written, 6 * 1) << op;
  }
}

TEST(LogicalCompare, IntegerComparisonsAreNotFloatingPointWork) {
  ModelBuilder b(17);
  b.input("a", kInt64, Shape{4}).input("b", kInt64, Shape{1});
  b.node("Equal", {"a", "b"}, {"eq"});
  b.node("Greater", {"a", "b"}, {"gt"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("eq"), (Shape{4}));
  EXPECT_DOUBLE_EQ(run->cost("eq").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("gt").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("gt").bytes_read, (4 + 1) * 8);
  EXPECT_DOUBLE_EQ(run->cost("gt").bytes_written, 4);
}

TEST(LogicalBoolean, AndOrXorNotOnBools) {
  ModelBuilder b(17);
  b.input("p", kBool, Shape{2, 3}).input("q", kBool, Shape{2, 1});
  for (const char* op : {"And", "Or", "Xor"}) b.node(op, {"p", "q"}, {op});
  b.node("Not", {"p"}, {"Not"});
  auto run = analyse(b);
  for (const char* op : {"And", "Or", "Xor", "Not"}) {
    EXPECT_EQ(run->shape(op), (Shape{2, 3})) << op;
    EXPECT_EQ(run->tensor(op).dtype, kBool) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).flops, 0) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_written, 6) << op;
  }
  EXPECT_DOUBLE_EQ(run->cost("And").bytes_read, 6 + 2);
  EXPECT_DOUBLE_EQ(run->cost("Not").bytes_read, 6);
}

TEST(LogicalBitwise, ShiftsAndBitOpsKeepTheIntegerDtype) {
  ModelBuilder b(18);
  b.input("u", kUint8, Shape{4}).input("s", kUint8, Shape{4}).input("i", kInt32, Shape{2, 4});
  set_attr(b.node("BitShift", {"u", "s"}, {"BitShift"}), "direction", std::string("LEFT"));
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) b.node(op, {"i", "i"}, {op});
  b.node("BitwiseNot", {"i"}, {"BitwiseNot"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("BitShift"), (Shape{4}));
  EXPECT_EQ(run->tensor("BitShift").dtype, kUint8);
  EXPECT_DOUBLE_EQ(run->cost("BitShift").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("BitShift").bytes(), 4 + 4 + 4);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}) {
    EXPECT_EQ(run->shape(op), (Shape{2, 4})) << op;
    EXPECT_EQ(run->tensor(op).dtype, kInt32) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).flops, 0) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_written, 8 * 4) << op;
  }
  EXPECT_DOUBLE_EQ(run->cost("BitwiseAnd").bytes_read, 2 * 8 * 4);
}

TEST(LogicalPredicates, IsNaNAndIsInfReadFloatsWriteBools) {
  ModelBuilder b(17);
  b.input("x", kFloat16, Shape{2, 3});
  b.node("IsNaN", {"x"}, {"nan"});
  set_attr(b.node("IsInf", {"x"}, {"inf"}), "detect_negative", int64_t{0});
  auto run = analyse(b);
  for (const char* t : {"nan", "inf"}) {
    EXPECT_EQ(run->shape(t), (Shape{2, 3})) << t;
    EXPECT_EQ(run->tensor(t).dtype, kBool) << t;
    EXPECT_DOUBLE_EQ(run->cost(t).flops, 6) << t;
    EXPECT_DOUBLE_EQ(run->cost(t).bytes_read, 6 * 2) << t;
    EXPECT_DOUBLE_EQ(run->cost(t).bytes_written, 6) << t;
  }
}

TEST(LogicalFolding, ComparisonsOfKnownValuesWithBroadcast) {
  ModelBuilder b(17);
  b.ints("dims", {1, -1, 3}).ints("minus_one", {-1}, {}).ints("three", {3}, {});
  b.node("Equal", {"dims", "minus_one"}, {"eq"});
  b.node("Less", {"dims", "three"}, {"lt"});
  b.node("LessOrEqual", {"dims", "three"}, {"le"});
  b.node("Greater", {"dims", "minus_one"}, {"gt"});
  b.node("GreaterOrEqual", {"dims", "minus_one"}, {"ge"});
  b.floats("f", {0.5f, 2.0f});
  b.floats("one", {1.0f}, {});
  b.node("Less", {"f", "one"}, {"flt"});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "eq"), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(folded(*run, "lt"), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(folded(*run, "le"), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(folded(*run, "gt"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(folded(*run, "ge"), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(folded(*run, "flt"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run->shape("eq"), (Shape{3}));
}

TEST(LogicalFolding, BooleanAndBitwiseOpsOfKnownValues) {
  ModelBuilder b(18);
  int32_initializer(b, "p", kBool, {1, 1, 0, 0});
  int32_initializer(b, "q", kBool, {1, 0, 1, 0});
  int32_initializer(b, "m", kInt32, {12, 10, 7, 0});
  int32_initializer(b, "n", kInt32, {10, 6, 1, 5});
  b.node("And", {"p", "q"}, {"and"});
  b.node("Or", {"p", "q"}, {"or"});
  b.node("Xor", {"p", "q"}, {"xor"});
  b.node("Not", {"p"}, {"not"});
  b.node("BitwiseAnd", {"m", "n"}, {"band"});
  b.node("BitwiseOr", {"m", "n"}, {"bor"});
  b.node("BitwiseXor", {"m", "n"}, {"bxor"});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "and"), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(folded(*run, "or"), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(folded(*run, "xor"), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(folded(*run, "not"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(folded(*run, "band"), (std::vector<int64_t>{8, 2, 1, 0}));
  EXPECT_EQ(folded(*run, "bor"), (std::vector<int64_t>{14, 14, 7, 5}));
  EXPECT_EQ(folded(*run, "bxor"), (std::vector<int64_t>{6, 12, 6, 5}));
  EXPECT_EQ(run->tensor("band").dtype, kInt32);
}

TEST(LogicalErrors, ShapesThatDoNotBroadcastNameTheNode) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3}).input("y", kFloat, Shape{2});
  b.node("Less", {"x", "y"}, {"bad_compare"});
  try {
    analyse(b);
    ADD_FAILURE() << "accepted shapes that do not broadcast";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'bad_compare' (Less)"), std::string::npos) << e.what();
  }
}

}  // namespace modelcost::testing
