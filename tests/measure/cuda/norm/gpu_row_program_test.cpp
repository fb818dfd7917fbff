// The generated row program (norm/row_program.h) against the per-node CPU reference: spelled-out
// norms and normalisations whose reductions over the trailing axes run with their elementwise
// prologue and epilogue as one kernel. Skips without an NVIDIA GPU.
#ifdef MODELCOST_HAVE_CUDA

#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "measure/cuda/deployed/gpu_group_check.h"

namespace modelcost::testing {
namespace {

double tolerance(const char* dtype) { return std::string(dtype) == "fp16" ? 5e-3 : 2e-5; }

// A LayerNorm spelled out (mean, x - mean, its square, mean, + eps, sqrt, divide, scale, shift):
// two reductions and the work between them, one kernel. Rows a warp holds in registers (96),
// rows a warp streams (800), rows a block holds (1500 over few rows).
TEST(MeasureGpuRowProgram, SpelledOutLayerNormIsOneKernel) {
  SKIP_WITHOUT_GPU();
  for (const Shape& shape : {Shape{2, 7, 96}, Shape{64, 8, 800}, Shape{3, 5, 1500}}) {
    ModelBuilder b(13);
    add_layer_norm(b, "x", "y", shape);
    b.output("y");
    for (const char* dtype : {"fp32", "fp16"}) {
      const GroupResult r = run_group(*analyse(b), "y_mean", dtype);
      EXPECT_NE(r.gpu.runner.find("row program kernel (ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div,Mul,Add)"), std::string::npos)
          << r.gpu.runner;
      expect_close(r, tolerance(dtype));
    }
  }
}

// XCiT's F.normalize: the row's L2 norm, clipped, broadcast back by Expand, divides the row.
TEST(MeasureGpuRowProgram, L2NormalisationReadsItsRowOnce) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("q", kFloat, Shape{2, 4, 12, 196});
  b.floats("eps", {1e-12f}, {});
  b.ints("shape", {2, 4, 12, 196});
  set_attr(b.node("ReduceL2", {"q"}, {"n"}), "axes", std::vector<int64_t>{-1});
  b.node("Clip", {"n", "eps"}, {"c"});
  b.node("Expand", {"c", "shape"}, {"e"});
  b.node("Div", {"q", "e"}, {"y"});
  b.output("y");
  for (const char* dtype : {"fp32", "fp16"}) {
    const GroupResult r = run_group(*analyse(b), "n", dtype);
    EXPECT_NE(r.gpu.runner.find("row program kernel (ReduceL2,Clip,Div), generated, a warp per row"), std::string::npos)
        << r.gpu.runner;
    expect_close(r, tolerance(dtype));
  }
}

// A scaled softmax after an additive bias (LeViT's attention biases), and a log-softmax: the max
// and the sum of exponentials are the row's two reductions.
TEST(MeasureGpuRowProgram, SoftmaxAfterItsScaleAndBias) {
  SKIP_WITHOUT_GPU();
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    ModelBuilder b(13);
    b.input("s", kFloat, Shape{2, 4, 49, 49}).input("bias", kFloat, Shape{4, 49, 49});
    b.floats("scale", {0.25f}, {});
    b.node("Mul", {"s", "scale"}, {"m"});
    b.node("Add", {"m", "bias"}, {"a"});
    set_attr(b.node(op, {"a"}, {"y"}), "axis", int64_t{-1});
    b.output("y");
    for (const char* dtype : {"fp32", "fp16"}) {
      const GroupResult r = run_group(*analyse(b), "m", dtype);
      EXPECT_NE(r.gpu.runner.find(std::string("row program kernel (Mul,Add,") + op + ")"), std::string::npos) << r.gpu.runner;
      expect_close(r, tolerance(dtype));
    }
  }
}

// Work before the first reduction and a reduced result: x * w summed over each row, one value
// stored per row.
TEST(MeasureGpuRowProgram, AWeightedSumStoresOneValuePerRow) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{6, 10, 300}).input("w", kFloat, Shape{300});
  b.ints("axes", {-1});
  b.node("Mul", {"x", "w"}, {"p"});
  b.node("ReduceSum", {"p", "axes"}, {"y"});  // axes an input from opset 13
  b.output("y");
  for (const char* dtype : {"fp32", "fp16"}) {
    const GroupResult r = run_group(*analyse(b), "p", dtype);
    EXPECT_NE(r.gpu.runner.find("row program kernel (Mul,ReduceSum)"), std::string::npos) << r.gpu.runner;
    expect_close(r, tolerance(dtype));
  }
}

// A mean over a long spatial row with few rows takes a block per row, streaming the row: x -
// mean, scaled by the largest such difference of the row, and a per-channel weight.
TEST(MeasureGpuRowProgram, LongRowsTakeABlockAndStreamTheRow) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 6, 64, 64}).input("w", kFloat, Shape{6, 1, 1});
  b.floats("one", {1.f}, {});
  set_attr(b.node("ReduceMean", {"x"}, {"m"}), "axes", std::vector<int64_t>{2, 3});
  b.node("Sub", {"x", "m"}, {"d"});
  set_attr(b.node("ReduceMax", {"d"}, {"mx"}), "axes", std::vector<int64_t>{2, 3});
  b.node("Add", {"mx", "one"}, {"top"});
  b.node("Div", {"d", "top"}, {"s"});
  b.node("Mul", {"s", "w"}, {"y"});
  b.output("y");
  for (const char* dtype : {"fp32", "fp16"}) {
    const GroupResult r = run_group(*analyse(b), "m", dtype);
    EXPECT_NE(r.gpu.runner.find("row program kernel (ReduceMean,Sub,ReduceMax,Add,Div,Mul), generated, a block per row"),
              std::string::npos)
        << r.gpu.runner;
    expect_close(r, tolerance(dtype));
  }
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
