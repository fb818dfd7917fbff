// What a product's library call takes into its own epilogue (kernel_split.cpp): a BatchNorm over
// its rows or a layer scale folded into its constant weight, a bias and a residual; what it leaves
// to a chain after it (the group's library tail).
#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

TEST(KernelSplit, BatchNormOverRowsJoinsAChainOverTheirReshapedView) {
  // LeViT's linear: MatMul, Flatten to [tokens, C], BatchNorm over C, Reshape back, HardSwish.
  // The BatchNorm is a per-C scale and shift whichever view of the rows it runs over, so the
  // chain after the product takes the BatchNorm and the activation.
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 6, 16});
  b.weight("w", kFloat, {16, 8}).ints("flat", {12, 8}).ints("back", {2, 6, 8});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {8});
  b.node("MatMul", {"x", "w"}, {"p"});
  b.node("Reshape", {"p", "flat"}, {"rows"});
  b.node("BatchNormalization", {"rows", "s", "bb", "m", "v"}, {"n"});
  b.node("Reshape", {"n", "back"}, {"t"});
  b.node("HardSwish", {"t"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_TRUE(f.plan.groups[0].library_tail) << f.describe();
}

TEST(KernelSplit, BatchNormOverAProductsRowsFoldsIntoItsWeights) {
  // LeViT's residual linear: MatMul, Flatten, BatchNorm, Reshape back, residual Add. With a constant
  // weight the BatchNorm folds into its columns and the bias, so one GEMM takes the whole group; a
  // product of two activations has no weight to fold into and runs the chain after it.
  for (const bool constant : {true, false}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{2, 6, 16}).input("skip", kFloat, Shape{2, 6, 8});
    if (constant) b.weight("w", kFloat, {16, 8});
    else b.input("w", kFloat, Shape{16, 8});
    b.ints("flat", {12, 8}).ints("back", {2, 6, 8});
    for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {8});
    b.node("MatMul", {"x", "w"}, {"p"});
    b.node("Reshape", {"p", "flat"}, {"rows"});
    b.node("BatchNormalization", {"rows", "s", "bb", "m", "v"}, {"n"});
    b.node("Reshape", {"n", "back"}, {"t"});
    b.node("Add", {"t", "skip"}, {"y"});
    b.output("y");
    Fused f(b);
    ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
    EXPECT_EQ(f.plan.groups[0].library_tail, !constant) << f.describe();
  }
}

TEST(KernelSplit, LayerScaleFoldsIntoTheProductsWeights) {
  // A transformer block's layer scale: x + gamma * (h W + b). Before the residual, gamma folds into
  // W's columns and b, so one GEMM takes the group; a scale after the residual (or of a product
  // of two activations) is a kernel after the library call.
  for (const bool before_residual : {true, false}) {
    ModelBuilder b;
    b.input("h", kFloat, Shape{2, 6, 16}).input("x", kFloat, Shape{2, 6, 8});
    b.weight("w", kFloat, {16, 8}).weight("bias", kFloat, {8}).weight("gamma", kFloat, {8});
    b.node("MatMul", {"h", "w"}, {"p"});
    b.node("Add", {"p", "bias"}, {"pb"});
    if (before_residual) {
      b.node("Mul", {"gamma", "pb"}, {"ps"});
      b.node("Add", {"x", "ps"}, {"y"});
    } else {
      b.node("Add", {"pb", "x"}, {"r"});
      b.node("Mul", {"r", "gamma"}, {"y"});
    }
    b.output("y");
    Fused f(b);
    ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
    EXPECT_EQ(f.plan.groups[0].library_tail, !before_residual) << f.describe();
  }
}

TEST(KernelSplit, LayerScaleFoldsIntoADenseConv) {
  // PoolFormer's and EfficientFormer's MLP: x + gamma[C,1,1] * conv1x1(h). The scale folds into the
  // conv's weight and bias; a grouped conv's is a kernel after the library call.
  for (const bool dense : {true, false}) {
    ModelBuilder b;
    b.input("h", kFloat, Shape{1, 8, 6, 6}).input("x", kFloat, Shape{1, 8, 6, 6});
    b.weight("w", kFloat, {8, dense ? 8 : 4, 1, 1}).weight("bias", kFloat, {8}).weight("gamma", kFloat, {8, 1, 1});
    onnx::NodeProto& conv = b.node("Conv", {"h", "w", "bias"}, {"c"});
    if (!dense) set_attr(conv, "group", int64_t{2});
    b.node("Mul", {"c", "gamma"}, {"cs"});
    b.node("Add", {"cs", "x"}, {"y"});
    b.output("y");
    Fused f(b);
    ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
    EXPECT_EQ(f.plan.groups[0].library_tail, !dense) << f.describe();
  }
}

TEST(KernelSplit, PerChannelScaleAndShiftFoldIntoGemm) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 16});
  b.weight("w", kFloat, {16, 32});
  b.weight("s", kFloat, {32});
  b.weight("t", kFloat, {32});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Mul", {"m", "s"}, {"ms"});
  b.node("Add", {"ms", "t"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "matmul+bias+scale");
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
}

}  // namespace
}  // namespace modelcost::testing
