// Every fusion pattern on a hand-built graph: which nodes form one kernel, its name, and the bytes
// crossing its boundary.
#include "modelcost/fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

TEST(Fusion, ConvBiasReluResidualIsOneKernel) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 8, 16, 16});
  b.weight("w", kFloat, {8, 8, 3, 3});
  b.weight("bias", kFloat, {8, 1, 1});
  set_attr(b.node("Conv", {"x", "w"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"c", "bias"}, {"cb"});
  b.node("Add", {"cb", "x"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  const FusedGroup& g = f.plan.groups[0];
  EXPECT_EQ(g.label, "conv+bias+relu+add");
  EXPECT_EQ(g.pattern, "epilogue");
  EXPECT_EQ(g.members.size(), 4u);
  EXPECT_FALSE(g.library_tail);  // cuDNN's fused call takes all of it
  EXPECT_DOUBLE_EQ(g.bytes_read, f.bytes("x") + f.bytes("w") + f.bytes("bias"));
  EXPECT_DOUBLE_EQ(g.bytes_written, f.bytes("y"));
  EXPECT_DOUBLE_EQ(g.flops, f.total_flops());
}

// Exporters put the Identity nodes of shared weights at the top of the graph: such a node folds
// into the group that reads the weight without moving that group ahead of the work before it.
TEST(Fusion, WeightIdentityKeepsItsGroupInRunOrder) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 16});
  b.weight("w", kFloat, {16, 32});
  b.node("Identity", {"w"}, {"w_shared"});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("MatMul", {"s", "w_shared"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.group_of("w_shared"), f.group_of("y"));
  EXPECT_EQ(f.group_of("s"), 0) << f.describe();
  EXPECT_EQ(f.group_of("y"), 1) << f.describe();
  EXPECT_DOUBLE_EQ(f.group("y").bytes_read, f.bytes("s") + f.bytes("w"));
}

TEST(Fusion, BatchNormFoldsIntoConv) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 8, 8});
  b.weight("w", kFloat, {4, 4, 1, 1});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {4});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("BatchNormalization", {"c", "s", "bb", "m", "v"}, {"n"});
  b.node("Relu", {"n"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "conv+bn+relu");
}

TEST(Fusion, BatchNormAfterAnActivationJoinsTheChain) {
  // ConvMixer's conv, ReLU, BatchNorm, residual add: the BatchNorm cannot fold into the conv's
  // weights, so it runs as a scale and a shift in the chain after the conv's call, with the add.
  // After a MatMul it joins the product's epilogue.
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 8, 8}).input("seq", kFloat, Shape{6, 16});
  b.weight("w", kFloat, {4, 4, 1, 1}).weight("wm", kFloat, {16, 4});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {4});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Relu", {"c"}, {"r"});
  b.node("BatchNormalization", {"r", "s", "bb", "m", "v"}, {"n"});
  b.node("Add", {"n", "x"}, {"y"});
  b.node("BatchNormalization", {"y", "s", "bb", "m", "v"}, {"pre"});
  b.node("Relu", {"pre"}, {"z"});
  b.node("MatMul", {"seq", "wm"}, {"p"});
  b.node("BatchNormalization", {"p", "s", "bb", "m", "v"}, {"q"});
  b.output("z").output("q");
  Fused f(b);
  EXPECT_EQ(f.group_of("c"), f.group_of("r")) << f.describe();
  EXPECT_EQ(f.group_of("c"), f.group_of("n")) << f.describe();
  EXPECT_EQ(f.group_of("c"), f.group_of("y")) << f.describe();
  // The next block's BatchNorm and ReLU extend the same chain: nothing else reads the sum.
  EXPECT_EQ(f.group_of("c"), f.group_of("z")) << f.describe();
  EXPECT_TRUE(f.plan.groups[f.group_of("c")].library_tail) << f.describe();
  EXPECT_EQ(f.group_of("p"), f.group_of("q")) << f.describe();
}

TEST(Fusion, EpilogueDoesNotBroadcastToALargerResult) {
  // Squeeze-and-excitation: the 1x1 conv's tiny output scales a large tensor in a kernel of its own.
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 8, 16, 16});
  b.weight("w", kFloat, {8, 8, 1, 1});
  b.node("GlobalAveragePool", {"x"}, {"p"});
  b.node("Conv", {"p", "w"}, {"c"});
  b.node("Sigmoid", {"c"}, {"s"});
  b.node("Mul", {"x", "s"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 3u) << f.describe();
  EXPECT_EQ(f.label_of("s"), "conv+sigmoid");
  EXPECT_EQ(f.label_of("y"), "mul");
}

TEST(Fusion, ElementwiseChainIsOnePointwiseKernel) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{64, 64});
  b.input("z", kFloat, Shape{64, 64});
  b.floats("half", {0.5f}, {});
  b.node("Add", {"x", "z"}, {"a"});
  b.node("Mul", {"a", "half"}, {"m"});
  b.node("Tanh", {"m"}, {"t"});
  b.node("Sub", {"t", "x"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "pointwise");
  // x is read once though two members read it; a, m, t never leave the kernel.
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_read, f.bytes("x") + f.bytes("z") + f.bytes("half"));
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
}

// The runtime of --measure runs a spelled-out norm as one generated row kernel: both reductions
// over the trailing axis with the elementwise work before, between and after them, x read and y
// written once.
TEST(Fusion, SpelledOutLayerNormIsOneRowKernelInTheMeasuredRuntime) {
  ModelBuilder b;
  add_layer_norm(b, "x", "y", Shape{2, 16, 64});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.apart(), 0u);
  EXPECT_EQ(f.plan.groups[0].members.size(), 9u);
  EXPECT_EQ(f.plan.groups[0].kernel.cls, KernelClass::kNorm);
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
  EXPECT_LT(f.plan.groups[0].bytes_read, 1.01 * f.bytes("x") + 1024);
}

// XCiT's F.normalize over the tokens as exported: ReduceL2, Clip, Expand back, Div. The row's norm
// broadcast by Expand is a row value, not a copy: one row kernel.
TEST(Fusion, L2NormalisationWithItsExpandIsOneRowKernel) {
  ModelBuilder b(17);
  b.input("q", kFloat, Shape{2, 4, 48, 196});
  b.ints("shape", {2, 4, 48, 196});
  b.floats("eps", {1e-12f}, {});
  set_attr(b.node("ReduceL2", {"q"}, {"n"}), "axes", std::vector<int64_t>{-1});
  b.node("Clip", {"n", "eps"}, {"c"});
  b.node("Expand", {"c", "shape"}, {"e"});
  b.node("Div", {"q", "e"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_TRUE(f.plan.groups[0].apart_reason.empty()) << f.plan.groups[0].apart_reason;
  EXPECT_EQ(f.plan.groups[0].label, "l2_norm");
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
}

// A softmax over the last axis after its scale and an additive bias (attention biases when the
// attention runs apart): one row kernel. Over another axis it is no row of the trailing ones.
TEST(Fusion, SoftmaxAfterItsScaleAndBiasIsOneRowKernel) {
  for (const int64_t axis : {int64_t{-1}, int64_t{1}}) {
    ModelBuilder b(13);
    b.input("s", kFloat, Shape{2, 4, 49, 49}).input("bias", kFloat, Shape{4, 49, 49});
    b.floats("scale", {0.25f}, {});
    b.node("Mul", {"s", "scale"}, {"m"});
    b.node("Add", {"m", "bias"}, {"a"});
    set_attr(b.node("Softmax", {"a"}, {"y"}), "axis", axis);
    b.output("y");
    Fused f(b);
    if (axis == -1) {
      ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
      EXPECT_EQ(f.plan.groups[0].label, "softmax");
      EXPECT_EQ(f.apart(), 0u);
    } else {
      EXPECT_EQ(f.apart(), 2u) << f.describe();
    }
  }
}

// A row of two dims (a spatial mean) read with a weight over the last of them alone: no single
// stride walks the weight along the row, so the region runs apart; a per-channel weight fits.
TEST(Fusion, RowKernelInputsWalkTheRowWithOneStride) {
  for (const bool per_channel : {true, false}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{1, 6, 8, 8});
    b.input("w", kFloat, per_channel ? Shape{6, 1, 1} : Shape{8});
    set_attr(b.node("ReduceMean", {"x"}, {"m"}), "axes", std::vector<int64_t>{2, 3});
    b.node("Sub", {"x", "m"}, {"d"});
    b.node("Mul", {"d", "w"}, {"y"});
    b.output("y");
    Fused f(b);
    EXPECT_EQ(f.apart(), per_channel ? 0u : 2u) << f.describe();
    if (!per_channel) EXPECT_NE(f.plan.groups[0].apart_reason.find("one stride"), std::string::npos) << f.plan.groups[0].apart_reason;
  }
}

// A reduction over a leading axis is no row of the trailing ones: the region runs apart.
TEST(Fusion, ReductionOverALeadingAxisRunsApart) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{8, 64});
  set_attr(b.node("ReduceSum", {"x"}, {"s"}), "axes", std::vector<int64_t>{0});
  b.node("Div", {"x", "s"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_NE(f.plan.groups[0].apart_reason.find("trailing axes"), std::string::npos) << f.plan.groups[0].apart_reason;
}

// A run longer than the generated chain takes is cut at its limit.
TEST(Fusion, ApartChainsStopAtTheChainKernelsLimits) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 64});
  set_attr(b.node("ReduceMean", {"x"}, {"m"}), "axes", std::vector<int64_t>{1});
  std::string last = "m0";
  b.node("Sub", {"x", "m"}, {last});
  for (int k = 1; k <= kChainLimits.steps; ++k) {
    const std::string next = "m" + std::to_string(k);
    b.node("Relu", {last}, {next});
    last = next;
  }
  b.output(last);
  Fused f(b, 0, FusionReach::kMeasuredRuntime);
  ASSERT_EQ(f.plan.groups.size(), 3u) << f.describe();
  EXPECT_EQ(f.plan.groups[1].members.size(), size_t(kChainLimits.steps));
  EXPECT_EQ(f.plan.groups[2].members.size(), 1u);
}

TEST(Fusion, SpelledOutLayerNorm) {
  ModelBuilder b;
  add_layer_norm(b, "x", "y", Shape{2, 16, 64});
  b.output("y");
  Fused f(b, 0, FusionReach::kEveryPattern);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_TRUE(f.plan.groups[0].apart_reason.empty());
  EXPECT_EQ(f.plan.groups[0].label, "layer_norm");
  EXPECT_EQ(f.plan.groups[0].members.size(), 9u);
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
  EXPECT_LT(f.plan.groups[0].bytes_read, 1.01 * f.bytes("x") + 1024);
}

TEST(Fusion, SpelledOutRmsNormAfterResidualAdd) {
  // The residual Add is the previous GEMM's epilogue; the norm's Pow stays with the norm.
  ModelBuilder b;
  b.input("x", kFloat, Shape{16, 64});
  b.input("h", kFloat, Shape{16, 64});
  b.weight("w", kFloat, {64, 64});
  b.weight("g", kFloat, {64});
  b.ints("axes", {-1});
  b.floats("two", {2.0f}, {});
  b.floats("eps", {1e-6f}, {});
  b.node("MatMul", {"x", "w"}, {"o"});
  b.node("Add", {"h", "o"}, {"r"});
  b.node("Pow", {"r", "two"}, {"p"});
  b.node("ReduceMean", {"p", "axes"}, {"ms"}, "");
  b.node("Add", {"ms", "eps"}, {"e"});
  b.node("Sqrt", {"e"}, {"sq"});
  b.node("Reciprocal", {"sq"}, {"rs"});
  b.node("Mul", {"r", "rs"}, {"n"});
  b.node("Mul", {"g", "n"}, {"y"});
  b.output("y");
  Fused f(b, /*opset=*/18, FusionReach::kEveryPattern);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.label_of("r"), "matmul+add");
  EXPECT_EQ(f.label_of("y"), "rms_norm");
  EXPECT_EQ(f.group_of("p"), f.group_of("y"));
}

TEST(Fusion, SpelledOutSoftmax) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{8, 128});
  b.ints("axes", {-1});
  b.node("ReduceMax", {"x", "axes"}, {"mx"});
  b.node("Sub", {"x", "mx"}, {"d"});
  b.node("Exp", {"d"}, {"e"});
  b.node("ReduceSum", {"e", "axes"}, {"s"});
  b.node("Div", {"e", "s"}, {"y"});
  b.output("y");
  Fused f(b, 0, FusionReach::kEveryPattern);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "softmax");
}

TEST(Fusion, GeluErfAndTanhForms) {
  for (bool tanh_form : {false, true}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{8, 256});
    add_gelu(b, "x", "y", tanh_form);
    b.output("y");
    Fused f(b);
    ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
    EXPECT_EQ(f.plan.groups[0].label, "gelu") << tanh_form;
    EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_written, f.bytes("y"));
  }
}

TEST(Fusion, SiluAndHardSwish) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{8, 256});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Mul", {"x", "s"}, {"a"});
  b.node("HardSigmoid", {"a"}, {"hs"});
  b.node("Mul", {"a", "hs"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "silu");  // one kernel; the first activation names it
  EXPECT_EQ(f.plan.groups[0].members.size(), 4u);

  ModelBuilder h;
  h.input("x", kFloat, Shape{8, 256});
  h.node("HardSigmoid", {"x"}, {"hs"});
  h.node("Mul", {"x", "hs"}, {"y"});
  h.output("y");
  Fused g(h);
  ASSERT_EQ(g.plan.groups.size(), 1u) << g.describe();
  EXPECT_EQ(g.plan.groups[0].label, "hardswish");
}

// What the library call of an anchored group takes: cuBLASLt a bias and the erf GELU, cuDNN a bias,
// residual and ReLU; the rest (a tanh GELU, a SiLU, a scale) runs as a chain kernel after it.
TEST(Fusion, LibraryTailIsWhatTheLibraryCallCannotTake) {
  ModelBuilder erf = gemm_bias_gelu(64, 256, 512, false), tanh = gemm_bias_gelu(64, 256, 512, true);
  Fused with_erf(erf), with_tanh(tanh);
  ASSERT_EQ(with_erf.plan.groups.size(), 1u) << with_erf.describe();
  ASSERT_EQ(with_tanh.plan.groups.size(), 1u) << with_tanh.describe();
  EXPECT_FALSE(with_erf.plan.groups[0].library_tail);
  EXPECT_TRUE(with_tanh.plan.groups[0].library_tail);
  // cuBLASLt applies the GELU in a kernel of its own on operand rows of 16-byte multiples only.
  EXPECT_TRUE(with_erf.plan.groups[0].tail_where_unaligned);
  EXPECT_FALSE(runs_library_tail(with_erf.plan.groups[0], 2));
  EXPECT_TRUE(runs_library_tail(with_tanh.plan.groups[0], 2));

  ModelBuilder c;
  c.input("x", kFloat, Shape{1, 8, 16, 16});
  c.weight("w", kFloat, {8, 8, 3, 3});
  set_attr(c.node("Conv", {"x", "w"}, {"y0"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  c.node("Sigmoid", {"y0"}, {"s"});
  c.node("Mul", {"y0", "s"}, {"y"});
  c.output("y");
  Fused silu(c);
  ASSERT_EQ(silu.plan.groups.size(), 1u) << silu.describe();
  EXPECT_TRUE(silu.plan.groups[0].library_tail);
  Fused every(c, 0, FusionReach::kEveryPattern);  // a fully fusing runtime compiles it in
  EXPECT_FALSE(every.plan.groups[0].library_tail);
}

// A token-mixing MLP's first product sums over 196 patches: 392 fp16 bytes a row, not a multiple of
// 16, so cuBLASLt's GELU epilogue runs after the GEMM as a second kernel; in fp32 (784 bytes) it fuses.
TEST(Fusion, GeluEpilogueOfUnalignedGemmRunsAsASecondKernel) {
  ModelBuilder b = gemm_bias_gelu(768, 196, 384);
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  const FusedGroup& g = f.plan.groups[0];
  EXPECT_FALSE(g.library_tail);
  EXPECT_TRUE(g.tail_where_unaligned);
  EXPECT_TRUE(runs_library_tail(g, 2));
  EXPECT_FALSE(runs_library_tail(g, 4));
  Fused every(b, 0, FusionReach::kEveryPattern);  // a fully fusing runtime compiles it in
  EXPECT_FALSE(runs_library_tail(every.plan.groups[0], 2));
}

TEST(Fusion, SwiGluBetweenProjections) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{16, 64});
  b.weight("wg", kFloat, {64, 128});
  b.weight("wu", kFloat, {64, 128});
  b.weight("wd", kFloat, {128, 64});
  b.node("MatMul", {"x", "wg"}, {"gate"});
  b.node("Sigmoid", {"gate"}, {"sg"});
  b.node("Mul", {"gate", "sg"}, {"silu"});
  b.node("MatMul", {"x", "wu"}, {"up"});
  b.node("Mul", {"silu", "up"}, {"h"});
  b.node("MatMul", {"h", "wd"}, {"y"});
  b.output("y");
  Fused f(b);
  // The gate and up projections read one input: one batched product (sibling_products_test.cpp).
  ASSERT_EQ(f.plan.groups.size(), 3u) << f.describe();
  EXPECT_EQ(f.group_of("gate"), f.group_of("up"));
  EXPECT_EQ(f.label_of("up"), "2x matmul");
  EXPECT_EQ(f.label_of("h"), "swiglu");
  EXPECT_EQ(f.pattern_of("h"), "swiglu");
  EXPECT_DOUBLE_EQ(f.group("h").bytes_read, f.bytes("gate") + f.bytes("up"));
  EXPECT_DOUBLE_EQ(f.group("h").bytes_written, f.bytes("h"));
}

TEST(Fusion, LayoutOpFoldsIntoTheGemmReadingIt) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{32, 16});
  b.weight("w", kFloat, {32, 8});
  set_attr(b.node("Transpose", {"x"}, {"xt"}), "perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"xt", "w"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.groups[0].label, "matmul");
  EXPECT_DOUBLE_EQ(f.plan.groups[0].bytes_read, f.bytes("x") + f.bytes("w"));
}

TEST(Fusion, FoldedShapeArithmeticBelongsToNoGroup) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  b.node("Shape", {"x"}, {"s"});
  b.node("Reshape", {"x", "s"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  Fused f(b);
  EXPECT_EQ(f.group_of("s"), -1);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  EXPECT_EQ(f.plan.kernels(), 1u);
}

TEST(Fusion, ContribFusedOpIsAGroupAlready) {
  ModelBuilder b;
  b.opset("com.microsoft", 1);
  b.input("x", kFloat, Shape{1, 4, 8, 8});
  b.weight("w", kFloat, {4, 4, 3, 3});
  auto& n = b.node("FusedConv", {"x", "w"}, {"c"}, "com.microsoft");
  set_attr(n, "activation", std::string("Relu"));
  b.node("Relu", {"c"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.pattern_of("c"), "fused_op");
}

TEST(Fusion, PatternTableOrder) {
  const std::vector<std::string> expected = {"fused_op", "attention",   "swiglu",    "sibling_products", "in_place",
                                             "epilogue", "layout_fold", "pointwise", "single"};
  EXPECT_EQ(fusion_pattern_names(), expected);
}

}  // namespace
}  // namespace modelcost::testing
