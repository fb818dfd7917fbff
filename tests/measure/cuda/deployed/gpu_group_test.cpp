// Each fused runner of the deployed view against the per-node CPU reference on small shapes:
// the group runs once on the GPU (group_check.h) and its members one by one on the CPU, on the
// same inputs. Skips without an NVIDIA GPU.
#ifdef MODELCOST_HAVE_CUDA

#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "measure/cuda/deployed/gpu_group_check.h"

namespace modelcost::testing {
namespace {

TEST(MeasureGpuGroups, ConvBiasResidualReluIsOneCudnnCall) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 16, 10, 10}).input("skip", kFloat, Shape{2, 32, 10, 10});
  b.weight("w", kFloat, Shape{32, 16, 3, 3}).weight("bias", kFloat, Shape{32});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"c", "skip"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  for (const char* dtype : {"fp16", "fp32"}) {
    const GroupResult r = run_group(*run, "c", dtype);
    EXPECT_NE(r.gpu.runner.find("cudnn fused conv+bias+add+relu"), std::string::npos) << r.gpu.runner;
    expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-3);
  }
}

// A layer scale after a dense conv (x + gamma[C,1,1] * conv(h), as PoolFormer's MLP has it) folds
// into a copy of the conv's weight and bias: one fused cuDNN call at either precision.
TEST(MeasureGpuGroups, ConvLayerScaleFoldsIntoTheFusedCall) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("h", kFloat, Shape{2, 16, 10, 10}).input("x", kFloat, Shape{2, 32, 10, 10});
  b.weight("w", kFloat, Shape{32, 16, 3, 3}).weight("bias", kFloat, Shape{32}).weight("gamma", kFloat, Shape{32, 1, 1});
  auto& conv = b.node("Conv", {"h", "w", "bias"}, {"c"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Mul", {"gamma", "c"}, {"cs"});
  b.node("Add", {"x", "cs"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  for (const char* dtype : {"fp16", "fp32"}) {
    const GroupResult r = run_group(*run, "c", dtype);
    EXPECT_NE(r.gpu.runner.find("cudnn fused conv+bias+folded channel scale+add"), std::string::npos) << r.gpu.runner;
    expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-3);
  }
}

TEST(MeasureGpuGroups, ConvRelu6RunsFusedOrAsConvThenChain) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 16, 8, 8});
  b.weight("w", kFloat, Shape{16, 16, 3, 3}).weight("bias", kFloat, Shape{16});
  b.floats("lo", {0.f}, {}).floats("hi", {0.5f}, {});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Clip", {"c", "lo", "hi"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "c", "fp16");
  const bool fused = r.gpu.runner.find("+relu6") != std::string::npos;
  EXPECT_TRUE(fused || r.gpu.runner.find("pointwise chain kernel (Clip)") != std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
}

TEST(MeasureGpuGroups, ConvSiluIsConvThenOneChain) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 8, 6, 6});
  b.weight("w", kFloat, Shape{8, 8, 1, 1}).weight("bias", kFloat, Shape{8});
  b.node("Conv", {"x", "w", "bias"}, {"c"});
  b.node("Sigmoid", {"c"}, {"g"});
  b.node("Mul", {"c", "g"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "c", "fp16");
  EXPECT_NE(r.gpu.runner.find("pointwise chain kernel (Sigmoid,Mul)"), std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
}

// The own depthwise kernel applies ReLU6 (Clip), SiLU (x * Sigmoid(x)) or the spelled-out erf
// GELU before its store; the group times it against conv + chain and keeps the faster, which for
// one small tensor is the single kernel.
TEST(MeasureGpuGroups, DepthwiseConvTakesItsActivationIntoTheStore) {
  SKIP_WITHOUT_GPU();
  for (const std::string activation : {"Clip", "Silu", "Gelu"}) {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{2, 16, 9, 11});
    b.weight("w", kFloat, Shape{16, 1, 3, 3}).weight("bias", kFloat, Shape{16});
    b.floats("lo", {0.f}, {}).floats("hi", {0.5f}, {});
    auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
    set_attr(conv, "group", int64_t{16});
    set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.floats("sqrt2", {1.41421356f}, {}).floats("one", {1.f}, {}).floats("half", {0.5f}, {});
    if (activation == "Clip") {
      b.node("Clip", {"c", "lo", "hi"}, {"y"});
    } else if (activation == "Gelu") {
      b.node("Div", {"c", "sqrt2"}, {"d"});
      b.node("Erf", {"d"}, {"e"});
      b.node("Add", {"e", "one"}, {"e1"});
      b.node("Mul", {"c", "e1"}, {"p"});
      b.node("Mul", {"p", "half"}, {"y"});
    } else {
      b.node("Sigmoid", {"c"}, {"g"});
      b.node("Mul", {"c", "g"}, {"y"});
    }
    b.output("y");
    for (const char* dtype : {"fp16", "fp32"}) {
      const GroupResult r = run_group(*analyse(b), "c", dtype);
      EXPECT_EQ(r.gpu.runner.find("own depthwise conv NCHW +bias +" + activation), size_t{0}) << r.gpu.runner;
      expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-5);
    }
  }
}

// ConvMixer's depthwise conv, ReLU, BatchNorm and residual add, and XCiT's conv, GELU and
// BatchNorm: the BatchNorm folds to a per-channel scale and shift the store applies after the
// activation, the residual after that.
TEST(MeasureGpuGroups, DepthwiseConvStoresItsBatchNormAndResidual) {
  SKIP_WITHOUT_GPU();
  for (const bool convmixer : {true, false}) {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{2, 16, 9, 11});
    b.weight("w", kFloat, Shape{16, 1, 3, 3}).weight("bias", kFloat, Shape{16});
    for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {16});
    b.floats("sqrt2", {1.41421356f}, {}).floats("one", {1.f}, {}).floats("half", {0.5f}, {});
    auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
    set_attr(conv, "group", int64_t{16});
    set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    if (convmixer) {
      b.node("Relu", {"c"}, {"a"});
    } else {
      b.node("Div", {"c", "sqrt2"}, {"d"});
      b.node("Erf", {"d"}, {"e"});
      b.node("Add", {"e", "one"}, {"e1"});
      b.node("Mul", {"c", "e1"}, {"p"});
      b.node("Mul", {"p", "half"}, {"a"});
    }
    b.node("BatchNormalization", {"a", "s", "bb", "m", "v"}, {convmixer ? "n" : "y"});
    if (convmixer) b.node("Add", {"n", "x"}, {"y"});
    b.output("y");
    for (const char* dtype : {"fp16", "fp32"}) {
      const GroupResult r = run_group(*analyse(b), "c", dtype);
      const std::string store = convmixer ? "+Relu +scale,shift +residual" : "+Gelu +scale,shift";
      EXPECT_EQ(r.gpu.runner.find("own depthwise conv NCHW +bias " + store), size_t{0}) << r.gpu.runner;
      expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-5);
    }
  }
}

// A BatchNorm after an activation runs in the pointwise chain as a scale and a shift; LeViT's
// BatchNorm over a product's rows between a Flatten and a Reshape back folds into the product's
// weight and bias, the activation after it a chain.
TEST(MeasureGpuGroups, BatchNormRunsInThePointwiseChain) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 8, 5, 5}).input("seq", kFloat, Shape{2, 6, 16});
  b.weight("wm", kFloat, {16, 8}).ints("flat", {12, 8}).ints("back", {2, 6, 8});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {8});
  b.node("Relu", {"x"}, {"r"});
  b.node("BatchNormalization", {"r", "s", "bb", "m", "v"}, {"n"});
  b.node("Add", {"n", "x"}, {"y"});
  b.node("MatMul", {"seq", "wm"}, {"p"});
  b.node("Reshape", {"p", "flat"}, {"rows"});
  b.node("BatchNormalization", {"rows", "s", "bb", "m", "v"}, {"q"});
  b.node("Reshape", {"q", "back"}, {"t"});
  b.node("HardSwish", {"t"}, {"z"});
  b.output("y").output("z");
  auto run = analyse(b);
  for (const char* dtype : {"fp16", "fp32"}) {
    const double tolerance = std::string(dtype) == "fp16" ? 5e-3 : 1e-5;
    const GroupResult chain = run_group(*run, "r", dtype);
    EXPECT_NE(chain.gpu.runner.find("pointwise chain kernel (Relu,BatchNormalization,Add)"), std::string::npos)
        << chain.gpu.runner;
    expect_close(chain, tolerance);
    const GroupResult rows = run_group(*run, "p", dtype);
    EXPECT_EQ(rows.gpu.runner.find("cublasLt +folded batch norm +bias epilogue + pointwise chain kernel (HardSwish)"), size_t{0})
        << rows.gpu.runner;
    expect_close(rows, tolerance);
  }
}

// A Gemm with a transposed weight and its own bias, then a BatchNorm and a residual: the BatchNorm
// scales the weight's rows (its output columns) and the own bias, the residual goes through C.
TEST(MeasureGpuGroups, BatchNormFoldsIntoATransposedGemmWithItsBias) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{12, 16}).input("skip", kFloat, Shape{12, 8});
  b.weight("w", kFloat, {8, 16}).weight("c", kFloat, {8});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, {8});
  auto& gemm = b.node("Gemm", {"x", "w", "c"}, {"g"});
  set_attr(gemm, "transB", int64_t{1});
  b.node("BatchNormalization", {"g", "s", "bb", "m", "v"}, {"n"});
  b.node("Add", {"n", "skip"}, {"y"});
  b.output("y");
  for (const char* dtype : {"fp16", "fp32"}) {
    const GroupResult r = run_group(*analyse(b), "g", dtype);
    EXPECT_EQ(r.gpu.runner, "cublasLt +folded batch norm +bias +residual (C, beta 1) epilogue") << r.gpu.runner;
    expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-5);
  }
}

// A product of 4 heads into 4 (CaiT's talking heads) with its bias is also tried as the thin
// product kernel, timed against cuBLASLt's bias epilogue.
TEST(MeasureGpuGroups, ThinMatMulWithBiasTriesTheThinKernel) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 50, 50, 4});
  b.weight("w", kFloat, Shape{4, 4}).weight("bias", kFloat, Shape{4});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Add", {"m", "bias"}, {"y"});
  b.output("y");
  for (const char* dtype : {"fp16", "fp32"}) {
    const GroupResult r = run_group(*analyse(b), "m", dtype);
    EXPECT_NE(r.gpu.runner.find("thin product kernel 5000x4x4 +bias"), std::string::npos) << r.gpu.runner;
    expect_close(r, std::string(dtype) == "fp16" ? 5e-3 : 1e-5);
  }
}

// A classifier head at batch 1 (one row, weights [1000, 2048] with their bias) is also tried as
// the skinny weight stream, timed against cuBLASLt.
TEST(MeasureGpuGroups, OneRowGemmTriesTheSkinnyWeightStream) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(19);
  b.input("x", kFloat, Shape{1, 2048});
  b.weight("w", kFloat, Shape{1000, 2048}).weight("c", kFloat, Shape{1000});
  set_attr(b.node("Gemm", {"x", "w", "c"}, {"y"}), "transB", int64_t{1});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "y", "fp16");
  EXPECT_NE(r.gpu.runner.find("skinny weight stream 1x1000x2048 +bias"), std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
}

// A Concat its producers write in place, Split outputs that are views into it, and a second
// Concat in place of chain kernels' results: no kernel moves a byte, and the values are the
// reference's.
TEST(MeasureGpuGroups, InPlaceConcatsAndSplitsKeepTheValues) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b = convs_concat_split_concat();
  auto run = analyse(b);
  const FusionPlan plan = fuse(run->analysis);
  size_t in_place = 0;
  for (const FusedGroup& g : plan.groups) in_place += g.pattern == "in_place";
  EXPECT_EQ(in_place, 3u);
  expect_close(run_plan(*run, plan, "fp16"), 5e-3);
}

// Q, K and V of one input with their biases (read by attention) run as one strided batched
// cuBLASLt call whose three results sit side by side.
TEST(MeasureGpuGroups, SiblingProductsAreOneBatchedCall) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kHeads = 2, kSeq = 40, kDim = 32, kHidden = kHeads * kDim;
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, kSeq, kHidden});
  b.ints("split", {2, kSeq, kHeads, kDim});
  for (const std::string name : {"q", "k", "v"}) {
    b.weight("w_" + name, kFloat, Shape{kHidden, kHidden}).weight("b_" + name, kFloat, Shape{kHidden});
    b.node("MatMul", {"x", "w_" + name}, {name + "_p"});
    b.node("Add", {name + "_p", "b_" + name}, {name + "_b"});
    b.node("Reshape", {name + "_b", "split"}, {name + "_r"});
    set_attr(b.node("Transpose", {name + "_r"}, {name}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  }
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  set_attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "k_p", "fp16");
  EXPECT_NE(r.gpu.runner.find("strided batch of 3 sibling products"), std::string::npos) << r.gpu.runner;
  EXPECT_NE(r.gpu.runner.find("+bias"), std::string::npos) << r.gpu.runner;
  EXPECT_EQ(r.gpu.outputs.size(), 3u);
  expect_close(r, 5e-3);
}

// A gated MLP's gate and up projections (no biases, read by the SwiGLU kernel) as one batched call.
TEST(MeasureGpuGroups, GateAndUpProjectionsAreOneBatchedCall) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 40, 64});
  b.weight("wg", kFloat, Shape{64, 96}).weight("wu", kFloat, Shape{64, 96});
  b.node("MatMul", {"x", "wg"}, {"gate"});
  b.node("Sigmoid", {"gate"}, {"sg"});
  b.node("Mul", {"gate", "sg"}, {"silu"});
  b.node("MatMul", {"x", "wu"}, {"up"});
  b.node("Mul", {"silu", "up"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "up", "fp16");
  EXPECT_NE(r.gpu.runner.find("strided batch of 2 sibling products"), std::string::npos) << r.gpu.runner;
  EXPECT_EQ(r.gpu.runner.find("+bias"), std::string::npos) << r.gpu.runner;
  EXPECT_EQ(r.gpu.outputs.size(), 2u);
  expect_close(r, 5e-3);
}

// A layer scale before the residual (x + gamma * (h W + b)), and a scalar scale before a bias,
// fold into the product's weight columns and bias: one cuBLASLt call.
TEST(MeasureGpuGroups, LayerScaleFoldsIntoTheWeights) {
  SKIP_WITHOUT_GPU();
  for (const bool scalar : {false, true}) {
    ModelBuilder b(17);
    b.input("h", kFloat, Shape{2, 24, 64}).input("x", kFloat, Shape{2, 24, 96});
    b.weight("w", kFloat, Shape{64, 96}).weight("bias", kFloat, Shape{96});
    if (scalar) b.floats("gamma", {0.37f}, {});
    else b.weight("gamma", kFloat, Shape{96});
    b.node("MatMul", {"h", "w"}, {"p"});
    if (scalar) {  // (h W) * s + b: the bias added after the scale stays unscaled
      b.node("Mul", {"p", "gamma"}, {"ps"});
      b.node("Add", {"ps", "bias"}, {"pb"});
      b.node("Add", {"x", "pb"}, {"y"});
    } else {
      b.node("Add", {"p", "bias"}, {"pb"});
      b.node("Mul", {"gamma", "pb"}, {"ps"});
      b.node("Add", {"x", "ps"}, {"y"});
    }
    b.output("y");
    const GroupResult r = run_group(*analyse(b), "p", "fp16");
    EXPECT_NE(r.gpu.runner.find("+folded column scale +bias +residual"), std::string::npos) << r.gpu.runner;
    EXPECT_EQ(r.gpu.runner.find("chain"), std::string::npos) << r.gpu.runner;
    expect_close(r, 5e-3);
  }
}

TEST(MeasureGpuGroups, MatMulBiasGeluIsOneCublasLtEpilogue) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{2, 24, 64});
  b.weight("w", kFloat, Shape{64, 96}).weight("bias", kFloat, Shape{96});
  b.floats("sqrt2", {1.41421356f}, {}).floats("one", {1.f}, {}).floats("half", {0.5f}, {});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Add", {"m", "bias"}, {"h"});
  b.node("Div", {"h", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"e1"});
  b.node("Mul", {"h", "e1"}, {"p"});
  b.node("Mul", {"p", "half"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "m", "fp16");
  EXPECT_NE(r.gpu.runner.find("cublasLt +bias +gelu"), std::string::npos) << r.gpu.runner;
  expect_close(r, 1e-2);  // cuBLASLt's GELU is the tanh form
}

TEST(MeasureGpuGroups, MatMulBiasResidualGoesThroughC) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 20, 32}).input("skip", kFloat, Shape{3, 20, 48});
  b.weight("w", kFloat, Shape{32, 48}).weight("bias", kFloat, Shape{48});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Add", {"m", "bias"}, {"h"});
  b.node("Add", {"h", "skip"}, {"y"});
  b.output("y");
  const GroupResult r = run_group(*analyse(b), "m", "fp16");
  EXPECT_NE(r.gpu.runner.find("+residual"), std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
}

// A sequence-first attention's out-projection (torchvision's ViT): Gemm on [S B, E], reshaped to
// [S, B, E], transposed to [B, S, E], then the residual. The transpose goes into the GEMM's store.
TEST(MeasureGpuGroups, GemmTransposeResidualIsOneCublasLtCall) {
  SKIP_WITHOUT_GPU();
  for (int64_t batch : {3, 1}) {
    const int64_t seq = 37, e = 64;
    ModelBuilder b(17);
    b.input("x", kFloat, Shape{seq * batch, e}).input("skip", kFloat, Shape{batch, seq, e});
    b.weight("w", kFloat, Shape{e, e}).weight("bias", kFloat, Shape{e});
    b.ints("shape", {seq, batch, e});
    set_attr(b.node("Gemm", {"x", "w", "bias"}, {"m"}), "transB", int64_t{1});
    b.node("Reshape", {"m", "shape"}, {"r"});
    set_attr(b.node("Transpose", {"r"}, {"t"}), "perm", std::vector<int64_t>{1, 0, 2});
    b.node("Add", {"t", "skip"}, {"y"});
    b.output("y");
    const GroupResult r = run_group(*analyse(b), "m", "fp16");
    EXPECT_NE(r.gpu.runner.find("+residual"), std::string::npos) << r.gpu.runner;
    if (batch > 1) EXPECT_NE(r.gpu.runner.find("+transposed store"), std::string::npos) << r.gpu.runner;
    EXPECT_EQ(r.gpu.runner.find("chain"), std::string::npos) << r.gpu.runner;
    expect_close(r, 5e-3);
  }
}

TEST(MeasureGpuGroups, PointwiseChainWithBroadcast) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4, 8}).input("row", kFloat, Shape{8}).input("chan", kFloat, Shape{3, 1, 1});
  b.node("Add", {"x", "row"}, {"a"});
  b.node("Mul", {"a", "chan"}, {"m"});
  b.node("Tanh", {"m"}, {"t"});
  b.node("Sub", {"t", "x"}, {"y"});
  b.output("y");
  for (const char* dtype : {"fp32", "fp16"}) {
    const GroupResult r = run_group(*analyse(b), "a", dtype);
    EXPECT_NE(r.gpu.runner.find("pointwise chain kernel"), std::string::npos) << r.gpu.runner;
    expect_close(r, std::string(dtype) == "fp16" ? 3e-3 : 1e-5);
  }
}

// The chain kernel compiled for its own chain: 8-wide vectors where the element count allows
// (2x24x7x7), one element per thread where it does not (1x3x5x7), a per-channel scale read
// through a constant division in both.
TEST(MeasureGpuGroups, GeneratedChainMatchesTheReferenceVectorAndScalar) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : {Shape{2, 24, 7, 7}, Shape{1, 3, 5, 7}}) {
    ModelBuilder b(13);
    b.input("x", kFloat, shape).input("s", kFloat, Shape{shape[0], shape[1], 1, 1});
    b.node("Mul", {"x", "s"}, {"m"});
    b.node("Sigmoid", {"m"}, {"g"});
    b.node("Mul", {"m", "g"}, {"y"});
    b.output("y");
    for (const char* dtype : {"fp16", "fp32"}) {
      const GroupResult r = run_group(*analyse(b), "m", dtype);
      const std::string width = shape[1] == 24 ? "8 elements per thread" : "1 element per thread";
      EXPECT_NE(r.gpu.runner.find("(Mul,Sigmoid,Mul), generated, " + width), std::string::npos) << r.gpu.runner;
      expect_close(r, std::string(dtype) == "fp16" ? 3e-3 : 1e-5);
    }
  }
}

TEST(MeasureGpuGroups, MaskedAttentionIsOneFlashKernel) {
  SKIP_WITHOUT_GPU();
  for (int64_t d : {64, 32}) {
    ModelBuilder b(17);
    const int64_t sk = 70;  // two key tiles, the second partial
    b.input("q", kFloat, Shape{2, 3, 50, d}).input("k", kFloat, Shape{2, 3, sk, d}).input("v", kFloat, Shape{2, 3, sk, d});
    b.input("mask", kFloat, Shape{2, 1, 1, sk});
    b.floats("scale", {0.125f}, {});
    set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
    b.node("MatMul", {"q", "kt"}, {"s"});
    b.node("Mul", {"s", "scale"}, {"ss"});
    b.node("Add", {"ss", "mask"}, {"sm"});
    set_attr(b.node("Softmax", {"sm"}, {"p"}), "axis", int64_t{-1});
    b.node("MatMul", {"p", "v"}, {"o"});
    b.output("o");
    const GroupResult r = run_group(*analyse(b), "p", "fp16");
    EXPECT_NE(r.gpu.runner.find("flash attention"), std::string::npos) << r.gpu.runner;
    EXPECT_EQ(r.gpu.runner.find("contiguous copies"), std::string::npos) << r.gpu.runner;
    expect_close(r, 5e-3);
  }
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
