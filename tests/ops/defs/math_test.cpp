// Math family: elementwise arithmetic and activations, variadic ops, MatMul/Gemm/Einsum,
// softmax, TopK, CumSum, Det, signal ops. Every figure is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {
namespace {

struct PerElement {
  const char* op;
  double flops_per_element;
};

// Runs `op` on a float [2,3,4] input (24 elements) and checks shape, dtype, flops and bytes.
void expect_unary(const PerElement& p, int32_t dtype, double element_bytes, int opset = 18) {
  ModelBuilder b(opset);
  b.input("x", dtype, Shape{2, 3, 4});
  b.node(p.op, {"x"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 3, 4})) << p.op;
  EXPECT_EQ(run->tensor("y").dtype, dtype) << p.op;
  const NodeCost& cost = run->cost("y");
  EXPECT_TRUE(cost.known) << p.op;
  EXPECT_DOUBLE_EQ(cost.macs, 0) << p.op;
  EXPECT_DOUBLE_EQ(cost.flops, p.flops_per_element * 24) << p.op;
  EXPECT_DOUBLE_EQ(cost.bytes_read, 24 * element_bytes) << p.op;
  EXPECT_DOUBLE_EQ(cost.bytes_written, 24 * element_bytes) << p.op;
}

}  // namespace

TEST(MathElementwise, UnaryOpsFlopsPerElement) {
  const PerElement ops[] = {
      {"Neg", 1},      {"Abs", 1},        {"Sign", 1},      {"Reciprocal", 1},  {"Sqrt", 1},     {"Floor", 1},
      {"Ceil", 1},     {"Round", 1},      {"Exp", 1},       {"Log", 1},         {"Relu", 1},     {"Sin", 1},
      {"Cos", 1},      {"Tan", 1},        {"Asin", 1},      {"Acos", 1},        {"Atan", 1},     {"Sinh", 1},
      {"Cosh", 1},     {"Asinh", 1},      {"Acosh", 1},     {"Atanh", 1},       {"Erf", 1},      {"Tanh", 1},
      {"Sigmoid", 4},  {"HardSigmoid", 4}, {"HardSwish", 5}, {"LeakyRelu", 2},   {"Elu", 3},      {"Selu", 4},
      {"Celu", 4},     {"ThresholdedRelu", 1}, {"Softplus", 3}, {"Softsign", 3}, {"Mish", 5},    {"Shrink", 2},
      {"Clip", 2},     {"Hardmax", 1},    {"Softmax", 5},   {"LogSoftmax", 5},
  };
  for (const auto& p : ops) expect_unary(p, kFloat, 4);
  // Bytes follow the dtype; flops do not.
  expect_unary({"Sigmoid", 4}, kFloat16, 2);
  expect_unary({"Softmax", 5}, onnx::TensorProto::DOUBLE, 8);
}

TEST(MathElementwise, GeluErfAndTanhForms) {
  ModelBuilder b(20);
  b.input("x", kFloat, Shape{2, 3, 4});
  b.node("Gelu", {"x"}, {"erf"});
  set_attr(b.node("Gelu", {"x"}, {"tanh"}), "approximate", std::string("tanh"));
  b.output("erf").output("tanh");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("tanh"), (Shape{2, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("erf").flops, 5 * 24);
  EXPECT_DOUBLE_EQ(run->cost("tanh").flops, 9 * 24);
}

TEST(MathElementwise, BinaryOpsBroadcastAndCountOutputs) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3, 4}).input("v", kFloat, Shape{4}).input("slope", kFloat, Shape{3, 1});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) b.node(op, {"x", "v"}, {op});
  set_attr(b.node("Mod", {"v", "x"}, {"Mod"}), "fmod", int64_t{1});
  b.node("PRelu", {"x", "slope"}, {"PRelu"});
  auto run = analyse(b);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod"}) {
    EXPECT_EQ(run->shape(op), (Shape{2, 3, 4})) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).flops, 24) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).macs, 0) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_read, (24 + 4) * 4) << op;  // both inputs, at their own size
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_written, 24 * 4) << op;
  }
  EXPECT_DOUBLE_EQ(run->cost("PRelu").flops, 2 * 24);
  EXPECT_DOUBLE_EQ(run->cost("PRelu").bytes_read, (24 + 3) * 4);
}

TEST(MathElementwise, IntegerArithmeticIsNotFloatingPointWork) {
  ModelBuilder b(17);
  b.input("a", kInt64, Shape{6}).input("s", kInt32, Shape{6});
  for (const char* op : {"Add", "Mul", "Div", "Max"}) b.node(op, {"a", "a"}, {op});
  b.node("Neg", {"s"}, {"Neg"});
  b.node("CumSum", {"a", "zero"}, {"CumSum"});
  b.ints("zero", {0}, {});
  auto run = analyse(b);
  for (const char* op : {"Add", "Mul", "Div", "Max"}) {
    EXPECT_DOUBLE_EQ(run->cost(op).flops, 0) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_read, 2 * 6 * 8) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_written, 6 * 8) << op;
  }
  EXPECT_EQ(run->tensor("Neg").dtype, kInt32);
  EXPECT_DOUBLE_EQ(run->cost("Neg").flops, 0);
  EXPECT_DOUBLE_EQ(run->cost("Neg").bytes(), 2 * 6 * 4);
  EXPECT_DOUBLE_EQ(run->cost("CumSum").flops, 0);
}

TEST(MathElementwise, VariadicMaxMinSumMean) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{3}).input("c", kFloat, Shape{2, 1});
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) b.node(op, {"a", "b", "c"}, {op});
  b.node("Sum", {"a"}, {"sum_one"});
  auto run = analyse(b);
  for (const char* op : {"Max", "Min", "Sum"}) {
    EXPECT_EQ(run->shape(op), (Shape{2, 3})) << op;
    EXPECT_DOUBLE_EQ(run->cost(op).flops, 6 * 2) << op;  // two combining ops per output element
    EXPECT_DOUBLE_EQ(run->cost(op).bytes_read, (6 + 3 + 2) * 4) << op;
  }
  EXPECT_DOUBLE_EQ(run->cost("Mean").flops, 6 * 2 + 6);  // plus the divide
  EXPECT_DOUBLE_EQ(run->cost("sum_one").flops, 0);
}

TEST(MathElementwise, CumSumDetAndClipAttributes) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 3}).input("m", kFloat, Shape{2, 3, 3}).ints("axis", {1}, {});
  b.node("CumSum", {"x", "axis"}, {"cumsum"});
  b.node("Det", {"m"}, {"det"});
  b.output("cumsum").output("det");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("cumsum"), (Shape{2, 3}));
  EXPECT_DOUBLE_EQ(run->cost("cumsum").flops, 6);
  EXPECT_DOUBLE_EQ(run->cost("cumsum").bytes_read, 6 * 4 + 8);  // X and the int64 axis
  EXPECT_DOUBLE_EQ(run->cost("cumsum").bytes_written, 6 * 4);
  EXPECT_EQ(run->shape("det"), (Shape{2}));
  EXPECT_DOUBLE_EQ(run->cost("det").flops, 2 * 2.0 / 3.0 * 27);  // LU: 2/3 n^3 per matrix
  EXPECT_DOUBLE_EQ(run->cost("det").bytes_read, 18 * 4);
  EXPECT_DOUBLE_EQ(run->cost("det").bytes_written, 2 * 4);
}

TEST(MathFolding, ArithmeticOnKnownIntegers) {
  ModelBuilder b(17);
  b.ints("a", {7, -7, 9}).ints("b", {2, 2, -4}).ints("two", {2}, {});
  b.node("Add", {"a", "b"}, {"add"});
  b.node("Sub", {"a", "two"}, {"sub"});
  b.node("Mul", {"a", "two"}, {"mul"});
  b.node("Div", {"a", "b"}, {"div"});
  b.node("Mod", {"a", "b"}, {"mod"});
  set_attr(b.node("Mod", {"a", "b"}, {"fmod"}), "fmod", int64_t{1});
  b.node("Pow", {"b", "two"}, {"pow"});
  b.node("Neg", {"a"}, {"neg"});
  b.node("Abs", {"a"}, {"abs"});
  b.node("Max", {"a", "b"}, {"max"});
  b.node("Min", {"a", "b"}, {"min"});
  b.node("Clip", {"a", "lo", "hi"}, {"clip"});
  b.ints("lo", {-1}, {}).ints("hi", {8}, {});
  auto run = analyse(b);
  auto ints = [&](const char* t) { return run->tensor(t).value ? run->tensor(t).value->ints : std::vector<int64_t>{}; };
  EXPECT_EQ(ints("add"), (std::vector<int64_t>{9, -5, 5}));
  EXPECT_EQ(ints("sub"), (std::vector<int64_t>{5, -9, 7}));
  EXPECT_EQ(ints("mul"), (std::vector<int64_t>{14, -14, 18}));
  EXPECT_EQ(ints("div"), (std::vector<int64_t>{3, -3, -2}));   // truncates toward zero
  EXPECT_EQ(ints("mod"), (std::vector<int64_t>{1, 1, -3}));    // sign of the divisor
  EXPECT_EQ(ints("fmod"), (std::vector<int64_t>{1, -1, 1}));   // sign of the dividend
  EXPECT_EQ(ints("pow"), (std::vector<int64_t>{4, 4, 16}));
  EXPECT_EQ(ints("neg"), (std::vector<int64_t>{-7, 7, -9}));
  EXPECT_EQ(ints("abs"), (std::vector<int64_t>{7, 7, 9}));
  EXPECT_EQ(ints("max"), (std::vector<int64_t>{7, 2, 9}));
  EXPECT_EQ(ints("min"), (std::vector<int64_t>{2, -7, -4}));
  EXPECT_EQ(ints("clip"), (std::vector<int64_t>{7, -1, 8}));
}

TEST(MathFolding, FloatFunctionsAndDivisionByZeroStaysUnknown) {
  ModelBuilder b(17);
  b.floats("f", {2.5f, -1.5f, 4.0f}).ints("i", {6}).ints("zero", {0});
  b.node("Sqrt", {"f"}, {"sqrt"});
  b.node("Round", {"f"}, {"round"});
  b.node("Floor", {"f"}, {"floor"});
  b.node("Ceil", {"f"}, {"ceil"});
  b.node("Relu", {"f"}, {"relu"});
  b.node("Div", {"i", "zero"}, {"div0"});
  auto run = analyse(b);
  auto floats = [&](const char* t) { return run->tensor(t).value ? run->tensor(t).value->floats : std::vector<double>{}; };
  EXPECT_DOUBLE_EQ(floats("sqrt")[2], 2.0);
  EXPECT_EQ(floats("round"), (std::vector<double>{2.0, -2.0, 4.0}));  // ties to even
  EXPECT_EQ(floats("floor"), (std::vector<double>{2.0, -2.0, 4.0}));
  EXPECT_EQ(floats("ceil"), (std::vector<double>{3.0, -1.0, 4.0}));
  EXPECT_EQ(floats("relu"), (std::vector<double>{2.5, 0.0, 4.0}));
  EXPECT_EQ(run->shape("div0"), (Shape{1}));
  EXPECT_EQ(run->tensor("div0").value, nullptr);
}

TEST(MathFolding, MixedDtypePowAndEmptyClipBoundsAreLeftUnknown) {
  ModelBuilder b(13);
  b.ints("v", {4, 9}).floats("half", {0.5f}, {}).floats("no_bound", {}, {0});
  b.node("Pow", {"v", "half"}, {"root"});  // int64 output: truncating 0.5 to 0 first would give 1s
  b.node("Clip", {"v", "no_bound"}, {"clipped"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("root"), (Shape{2}));
  EXPECT_EQ(run->tensor("root").dtype, kInt64);
  EXPECT_EQ(run->tensor("root").value, nullptr);
  EXPECT_EQ(run->shape("clipped"), (Shape{2}));
  EXPECT_EQ(run->tensor("clipped").value, nullptr);
}

// ---- matrix products ----

TEST(MathMatMul, TwoDimensional) {
  ModelBuilder b;
  b.input("a", kFloat, Shape{4, 5}).weight("w", kFloat, Shape{5, 6});
  b.node("MatMul", {"a", "w"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{4, 6}));
  const NodeCost& c = run->cost("y");
  EXPECT_DOUBLE_EQ(c.macs, 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(c.params, 30);
  EXPECT_DOUBLE_EQ(c.bytes_read, (20 + 30) * 4);
  EXPECT_DOUBLE_EQ(c.bytes_written, 24 * 4);
}

TEST(MathMatMul, OneDimensionalOperandsArePromotedAndDropped) {
  ModelBuilder b;
  b.input("v", kFloat, Shape{5}).input("m", kFloat, Shape{4, 5}).input("n", kFloat, Shape{5, 6});
  b.input("batch", kFloat, Shape{2, 5, 6});
  b.node("MatMul", {"v", "n"}, {"vector_matrix"});
  b.node("MatMul", {"m", "v"}, {"matrix_vector"});
  b.node("MatMul", {"v", "v"}, {"dot"});
  b.node("MatMul", {"v", "batch"}, {"vector_batch"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("vector_matrix"), (Shape{6}));
  EXPECT_DOUBLE_EQ(run->cost("vector_matrix").macs, 5 * 6);
  EXPECT_EQ(run->shape("matrix_vector"), (Shape{4}));
  EXPECT_DOUBLE_EQ(run->cost("matrix_vector").macs, 4 * 5);
  EXPECT_EQ(run->shape("dot"), (Shape{}));
  EXPECT_DOUBLE_EQ(run->cost("dot").macs, 5);
  EXPECT_DOUBLE_EQ(run->cost("dot").flops, 10);
  EXPECT_EQ(run->shape("vector_batch"), (Shape{2, 6}));
  EXPECT_DOUBLE_EQ(run->cost("vector_batch").macs, 2 * 6 * 5);
}

TEST(MathMatMul, BatchDimsBroadcast) {
  ModelBuilder b;
  b.input("a", kFloat16, Shape{2, 1, 4, 5}).input("b", kFloat16, Shape{3, 5, 6});
  b.node("MatMul", {"a", "b"}, {"y"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 3, 4, 6}));
  EXPECT_EQ(run->tensor("y").dtype, kFloat16);
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 2 * 3 * 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2.0 * 2 * 3 * 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(run->cost("y").bytes_read, (40 + 90) * 2);
  EXPECT_DOUBLE_EQ(run->cost("y").bytes_written, 144 * 2);
}

TEST(MathMatMul, HugeProductNeverWraps) {
  const int64_t n = int64_t{1} << 31;
  ModelBuilder b;
  b.input("a", kFloat, Shape{n, n}).input("b", kFloat, Shape{n, n});
  b.node("MatMul", {"a", "b"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{n, n}));
  const NodeCost& c = run->cost("y");
  EXPECT_EQ(c.macs, std::ldexp(1.0, 93));  // 2^31 * 2^31 * 2^31, exact in a double
  EXPECT_EQ(c.flops, std::ldexp(1.0, 94));
  EXPECT_EQ(c.bytes_read, std::ldexp(1.0, 65));     // two 2^62-element fp32 operands
  EXPECT_EQ(c.bytes_written, std::ldexp(1.0, 64));
  EXPECT_EQ(run->analysis.totals.macs, std::ldexp(1.0, 93));
}

TEST(MathGemm, TransposesAlphaBetaAndBias) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{4, 5}).input("at", kFloat, Shape{5, 4});
  b.weight("w", kFloat, Shape{5, 6}).weight("wt", kFloat, Shape{6, 5});
  b.weight("bias", kFloat, Shape{6}).weight("c", kFloat, Shape{4, 6});
  b.node("Gemm", {"a", "w"}, {"plain"});
  auto& t = b.node("Gemm", {"at", "wt", "bias"}, {"transposed"});
  set_attr(t, "transA", int64_t{1});
  set_attr(t, "transB", int64_t{1});
  auto& scaled = b.node("Gemm", {"a", "w", "c"}, {"scaled"});
  set_attr(scaled, "alpha", 0.5f);
  set_attr(scaled, "beta", 2.0f);
  auto run = analyse(b);
  const double mnk = 4 * 6 * 5, mn = 24;
  EXPECT_EQ(run->shape("plain"), (Shape{4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("plain").macs, mnk);
  EXPECT_DOUBLE_EQ(run->cost("plain").flops, 2 * mnk);
  EXPECT_EQ(run->shape("transposed"), (Shape{4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("transposed").macs, mnk);
  EXPECT_DOUBLE_EQ(run->cost("transposed").flops, 2 * mnk + mn);  // bias add
  EXPECT_DOUBLE_EQ(run->cost("transposed").params, 30 + 6);
  EXPECT_DOUBLE_EQ(run->cost("scaled").macs, mnk);
  EXPECT_DOUBLE_EQ(run->cost("scaled").flops, 2 * mnk + mn + 2 * mn);  // alpha scale; beta scale and add
  EXPECT_DOUBLE_EQ(run->cost("scaled").bytes_read, (20 + 30 + 24) * 4);
}

TEST(MathEinsum, MatMulBatchedAndAttentionForms) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{4, 5}).input("b", kFloat, Shape{5, 6});
  b.input("ba", kFloat, Shape{2, 4, 5}).input("bb", kFloat, Shape{2, 5, 6});
  b.input("q", kFloat, Shape{1, 2, 3, 8}).input("k", kFloat, Shape{1, 2, 7, 8});
  set_attr(b.node("Einsum", {"a", "b"}, {"mm"}), "equation", std::string("ij,jk->ik"));
  set_attr(b.node("Einsum", {"ba", "bb"}, {"bmm"}), "equation", std::string("bij, bjk -> bik"));
  set_attr(b.node("Einsum", {"q", "k"}, {"scores"}), "equation", std::string("bhqd,bhkd->bhqk"));
  set_attr(b.node("Einsum", {"a", "b"}, {"implicit"}), "equation", std::string("ij,jk"));
  auto run = analyse(b);
  EXPECT_EQ(run->shape("mm"), (Shape{4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("mm").macs, 4 * 5 * 6);
  EXPECT_DOUBLE_EQ(run->cost("mm").flops, 2 * 4 * 5 * 6);
  EXPECT_EQ(run->shape("bmm"), (Shape{2, 4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("bmm").macs, 2 * 4 * 5 * 6);
  EXPECT_EQ(run->shape("scores"), (Shape{1, 2, 3, 7}));
  EXPECT_DOUBLE_EQ(run->cost("scores").macs, 1 * 2 * 3 * 7 * 8);
  EXPECT_EQ(run->shape("implicit"), (Shape{4, 6}));  // letters used once, alphabetically
  EXPECT_DOUBLE_EQ(run->cost("implicit").macs, 4 * 5 * 6);
}

TEST(MathEinsum, EllipsisAlignsTrailingDimsAcrossRanks) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{3, 4, 5}).input("b", kFloat, Shape{2, 3, 5, 6});
  b.input("c", kFloat, Shape{2, 1, 4, 5});
  set_attr(b.node("Einsum", {"a", "b"}, {"ab"}), "equation", std::string("...ij,...jk->...ik"));
  set_attr(b.node("Einsum", {"b", "a"}, {"ba"}), "equation", std::string("...jk,...ij->...ik"));
  set_attr(b.node("Einsum", {"c", "b"}, {"cb"}), "equation", std::string("...ij,...jk"));  // implicit
  auto run = analyse(b);
  EXPECT_EQ(run->shape("ab"), (Shape{2, 3, 4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("ab").macs, 2 * 3 * 4 * 5 * 6);
  EXPECT_EQ(run->shape("ba"), (Shape{2, 3, 4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("ba").macs, 2 * 3 * 4 * 5 * 6);
  EXPECT_EQ(run->shape("cb"), (Shape{2, 3, 4, 6}));  // the size-1 ellipsis dim broadcasts
  EXPECT_DOUBLE_EQ(run->cost("cb").macs, 2 * 3 * 4 * 5 * 6);
}

TEST(MathEinsum, SingleOperandSumTraceAndTranspose) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{4, 5}).input("sq", kFloat, Shape{4, 4});
  set_attr(b.node("Einsum", {"a"}, {"rowsum"}), "equation", std::string("ij->i"));
  set_attr(b.node("Einsum", {"sq"}, {"trace"}), "equation", std::string("ii->"));
  set_attr(b.node("Einsum", {"a"}, {"transpose"}), "equation", std::string("ij->ji"));
  set_attr(b.node("Einsum", {"a"}, {"implicit_transpose"}), "equation", std::string("ji"));
  auto run = analyse(b);
  EXPECT_EQ(run->shape("rowsum"), (Shape{4}));
  EXPECT_DOUBLE_EQ(run->cost("rowsum").macs, 0);
  EXPECT_DOUBLE_EQ(run->cost("rowsum").flops, 20);  // one add per input element
  EXPECT_EQ(run->shape("trace"), (Shape{}));
  EXPECT_DOUBLE_EQ(run->cost("trace").flops, 4);
  EXPECT_EQ(run->shape("transpose"), (Shape{5, 4}));
  EXPECT_DOUBLE_EQ(run->cost("transpose").flops, 0);  // a permutation is no arithmetic
  EXPECT_DOUBLE_EQ(run->cost("transpose").bytes(), 2 * 20 * 4);
  EXPECT_EQ(run->shape("implicit_transpose"), (Shape{5, 4}));  // implicit output "ij" of a [j=4, i=5]
  EXPECT_DOUBLE_EQ(run->cost("implicit_transpose").flops, 0);
}

TEST(MathEinsum, ThreeOperandsOneLoopNest) {
  ModelBuilder b(17);
  b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{3, 4}).input("c", kFloat, Shape{4, 5});
  set_attr(b.node("Einsum", {"a", "b", "c"}, {"y"}), "equation", std::string("ij,jk,kl->il"));
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 5}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 2 * 3 * 4 * 5 * 2);  // all indices, one product per extra operand
}

TEST(MathSoftmax, OldOpsetAxisIsChecked) {
  ModelBuilder b(11);
  b.input("x", kFloat, Shape{2, 3});
  set_attr(b.node("Softmax", {"x"}, {"y"}), "axis", int64_t{2});
  expect_node_error(b, "y", "axis 2 is out of range");
}

TEST(MathTopK, KnownKIsExact) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 10}).ints("k", {4});
  b.node("TopK", {"x", "k"}, {"values", "indices"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("values"), (Shape{3, 4}));
  EXPECT_EQ(run->shape("indices"), (Shape{3, 4}));
  EXPECT_EQ(run->tensor("values").dtype, kFloat);
  EXPECT_EQ(run->tensor("indices").dtype, kInt64);
  EXPECT_FALSE(run->tensor("values").estimate);
  const NodeCost& c = run->cost("values");
  EXPECT_FALSE(c.estimate);
  EXPECT_DOUBLE_EQ(c.flops, 30 * 3);  // ceil(log2(4 + 1)) = 3 heap levels per element
  EXPECT_DOUBLE_EQ(c.bytes_read, 30 * 4 + 8);
  EXPECT_DOUBLE_EQ(c.bytes_written, 12 * 4 + 12 * 8);
}

TEST(MathTopK, UnknownKIsTheWholeAxisMarkedEstimate) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 10}).input("k", kInt64, Shape{1});
  set_attr(b.node("TopK", {"x", "k"}, {"values", "indices"}), "axis", int64_t{-1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("values"), (Shape{3, 10}));
  EXPECT_TRUE(run->tensor("values").estimate);
  EXPECT_TRUE(run->tensor("indices").estimate);
  EXPECT_TRUE(run->cost("values").estimate);
  EXPECT_DOUBLE_EQ(run->cost("values").flops, 30 * 4);  // ceil(log2(11)) = 4
  EXPECT_EQ(run->analysis.totals.estimated_nodes, 1u);
}

TEST(MathTopK, AttributeKBeforeOpset10AndIntegerInput) {
  ModelBuilder b(9);
  b.input("x", kFloat, Shape{3, 10}).input("xi", kInt64, Shape{3, 10});
  set_attr(b.node("TopK", {"x"}, {"values", "indices"}), "k", int64_t{2});
  set_attr(b.node("TopK", {"xi"}, {"ivalues", "iindices"}), "k", int64_t{2});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("values"), (Shape{3, 2}));
  EXPECT_DOUBLE_EQ(run->cost("values").flops, 30 * 2);  // ceil(log2(3)) = 2
  EXPECT_DOUBLE_EQ(run->cost("ivalues").flops, 0);      // integer comparisons
}

TEST(MathTopK, KLargerThanTheAxisIsRejected) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 10}).ints("k", {11});
  b.node("TopK", {"x", "k"}, {"values", "indices"});
  expect_node_error(b, "values", "k = 11 is outside [0, 10]");
}

TEST(MathSignal, DftAndStft) {
  ModelBuilder b(17);
  b.input("signal", kFloat, Shape{1, 16, 2}).input("audio", kFloat, Shape{1, 64, 1});
  b.ints("step", {16}, {}).ints("frame", {16}, {});
  b.node("DFT", {"signal"}, {"spectrum"});
  b.node("STFT", {"audio", "step", "", "frame"}, {"stft"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("spectrum"), (Shape{1, 16, 2}));
  EXPECT_DOUBLE_EQ(run->cost("spectrum").flops, 16 * 5 * 4);  // N=16 complex outputs, 5 N log2 N
  // 4 frames of 16 samples, onesided: 9 bins; 5 log2(16) flops per complex output of the 16-point FFT.
  EXPECT_EQ(run->shape("stft"), (Shape{1, 4, 9, 2}));
  EXPECT_DOUBLE_EQ(run->cost("stft").flops, 4 * 9 * 5 * 4);
}

TEST(MathSignal, WindowsAndMelMatrixCountTheirFloatOutputs) {
  ModelBuilder b(17);
  b.ints("size", {8}, {}).ints("bins", {4}, {}).ints("dft", {16}, {}).ints("rate", {8000}, {});
  b.floats("lo", {0.f}, {}).floats("hi", {4000.f}, {});
  b.node("HannWindow", {"size"}, {"hann"});
  b.node("HammingWindow", {"size"}, {"hamming"});
  b.node("BlackmanWindow", {"size"}, {"blackman"});
  b.node("MelWeightMatrix", {"bins", "dft", "rate", "lo", "hi"}, {"mel"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("hann"), (Shape{8}));
  EXPECT_EQ(run->tensor("hann").dtype, kFloat);
  EXPECT_DOUBLE_EQ(run->cost("hann").flops, 4 * 8);
  EXPECT_DOUBLE_EQ(run->cost("hamming").flops, 4 * 8);
  EXPECT_DOUBLE_EQ(run->cost("blackman").flops, 7 * 8);
  EXPECT_EQ(run->shape("mel"), (Shape{9, 4}));  // [dft/2 + 1, bins]
  EXPECT_DOUBLE_EQ(run->cost("mel").flops, 4 * 36);
}

TEST(MathErrors, LossTargetMustMatchTheScoresBeyondTheClassAxis) {
  ModelBuilder b(13);
  b.input("scores", kFloat, Shape{8, 10, 5}).input("target", kInt64, Shape{8, 6});
  b.node("NegativeLogLikelihoodLoss", {"scores", "target"}, {"nll"});
  expect_node_error(b, "nll", "scores [8,10,5] and target [8,6] do not match");
}

TEST(MathErrors, BadOperandsNameTheNode) {
  {
    ModelBuilder b;
    b.input("a", kFloat, Shape{4, 5}).input("b", kFloat, Shape{6, 7});
    b.node("MatMul", {"a", "b"}, {"mm"});
    expect_node_error(b, "mm", "inner dims differ: [4,5] x [6,7]");
  }
  {
    ModelBuilder b;
    b.input("a", kFloat, Shape{4, 5}).input("b", kFloat, Shape{6, 6});
    b.node("Gemm", {"a", "b"}, {"gemm"});
    expect_node_error(b, "gemm", "inner dims differ");
  }
  {
    ModelBuilder b;
    b.input("a", kFloat, Shape{4, 5}).input("b", kFloat, Shape{5, 6}).input("c", kFloat, Shape{5});
    b.node("Gemm", {"a", "b", "c"}, {"gemm_bias"});
    expect_node_error(b, "gemm_bias", "do not broadcast");
  }
  {
    ModelBuilder b;
    b.input("a", kFloat, Shape{4, 5}).input("b", kFloat, Shape{6, 7});
    set_attr(b.node("Einsum", {"a", "b"}, {"es"}), "equation", std::string("ij,jk->ik"));
    expect_node_error(b, "es", "index 'j' has sizes 5 and 6");
  }
  {
    ModelBuilder b;
    b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{4, 3});
    b.node("Add", {"a", "b"}, {"add"});
    expect_node_error(b, "add", "shapes [2,3] and [4,3] do not broadcast");
  }
  {
    ModelBuilder b;
    b.input("m", kFloat, Shape{2, 3});
    b.node("Det", {"m"}, {"det"});
    expect_node_error(b, "det", "square");
  }
}

}  // namespace modelcost::testing
