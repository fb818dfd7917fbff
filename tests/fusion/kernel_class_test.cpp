// The kernel plan's class and shape of a group: what prices it (kernel_curve_name).
#include "modelcost/kernel_plan.h"

#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

// A 3x3 depthwise conv over 16 channels (with a bias where asked, dilated `dilation`), then a SiLU
// spelled as Sigmoid and Mul or a ReLU.
void build_depthwise_then_activation(ModelBuilder& b, bool bias, int64_t dilation, bool silu) {
  b.input("x", kFloat, Shape{1, 16, 12, 12});
  b.weight("w", kFloat, {16, 1, 3, 3});
  if (bias) b.weight("bias", kFloat, {16});
  auto& conv = b.node("Conv", bias ? std::vector<std::string>{"x", "w", "bias"} : std::vector<std::string>{"x", "w"}, {"c"});
  set_attr(conv, "group", int64_t{16});
  set_attr(conv, "pads", std::vector<int64_t>{dilation, dilation, dilation, dilation});
  if (dilation > 1) set_attr(conv, "dilations", std::vector<int64_t>{dilation, dilation});
  if (silu) {
    b.node("Sigmoid", {"c"}, {"g"});
    b.node("Mul", {"c", "g"}, {"y"});
  } else {
    b.node("Relu", {"c"}, {"y"});
  }
  b.output("y");
}

// A depthwise conv with its SiLU (Sigmoid and Mul) is one kernel planned with the SiLU in it: the
// tactic that prices it differs from a depthwise conv with ReLU's (depthwise_swish).
TEST(Fusion, DepthwiseConvWithSiluIsPlannedWithItsSiluEpilogue) {
  for (const bool silu : {true, false}) {
    ModelBuilder b;
    build_depthwise_then_activation(b, true, 1, silu);
    Fused f(b);
    ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
    const KernelShape& kernel = f.plan.groups[0].kernel;
    EXPECT_EQ(kernel.cls, KernelClass::kDepthwise);
    EXPECT_EQ(kernel.swish_epilogue, silu) << f.plan.groups[0].label;
    EXPECT_EQ(kernel_curve_name(kernel, 4), silu ? "depthwise_swish" : "depthwise");
  }
}

// A depthwise conv of a dilated window (segmentation backbones' last stages) is priced by a curve
// of its own; its SiLU, where it has one, takes precedence (the fused tactic).
TEST(KernelClass, DilatedDepthwiseConvTakesItsOwnCurve) {
  for (const int64_t dilation : {1, 2})
    for (const bool silu : {false, true}) {
      ModelBuilder b;
      build_depthwise_then_activation(b, false, dilation, silu);
      Fused f(b);
      ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
      const KernelShape& kernel = f.plan.groups[0].kernel;
      EXPECT_DOUBLE_EQ(kernel.dilation, double(dilation));
      const std::string expected = silu ? "depthwise_swish" : dilation > 1 ? "depthwise_dilated" : "depthwise";
      EXPECT_EQ(kernel_curve_name(kernel, 2), expected) << "dilation " << dilation << (silu ? ", SiLU" : "");
    }
}

// A product of one row (a classifier at batch 1) is a stream of its weights, priced by the curve
// of one-row products; two rows keep the GEMM curve.
TEST(KernelClass, OneRowGemmIsPricedAsAStreamOfItsWeights) {
  for (const int64_t rows : {1, 2}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{rows, 2048}).weight("w", kFloat, {1000, 2048}).weight("c", kFloat, {1000});
    set_attr(b.node("Gemm", {"x", "w", "c"}, {"y"}), "transB", int64_t{1});
    b.input("h", kFloat, Shape{4, 1, 64}).weight("v", kFloat, {64, 64});
    b.node("MatMul", {"h", "v"}, {"z"});
    b.output("y").output("z");
    Fused f(b);
    const KernelShape& head = f.group("y").kernel;
    EXPECT_EQ(head.cls, KernelClass::kGemm);
    EXPECT_DOUBLE_EQ(head.rows, double(rows));
    EXPECT_EQ(kernel_curve_name(head, 2), rows == 1 ? "decode_gemm_m1" : "gemm");
    // [4, 1, 64] x [64, 64]: the four one-row products run as one product of four rows.
    EXPECT_EQ(kernel_curve_name(f.group("z").kernel, 2), "gemm");
  }
}

// A squeeze-excite 1x1 conv over one pooled pixel is a product of one row at batch 1, and of as
// many rows as the batch above it.
TEST(KernelClass, OnePixelConvAtBatchOneIsPricedAsAStreamOfItsWeights) {
  for (const int64_t batch : {1, 2}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{batch, 64, 1, 1}).weight("w", kFloat, {16, 64, 1, 1});
    b.node("Conv", {"x", "w"}, {"y"});
    b.output("y");
    Fused f(b);
    const KernelShape& squeeze = f.group("y").kernel;
    EXPECT_EQ(squeeze.cls, KernelClass::kConv1x1);
    EXPECT_DOUBLE_EQ(squeeze.rows, double(batch));
    EXPECT_EQ(kernel_curve_name(squeeze, 2), batch == 1 ? "decode_gemm_m1" : "conv1x1");
  }
}

}  // namespace
}  // namespace modelcost::testing
