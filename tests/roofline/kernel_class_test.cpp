// Which calibrated curve times a kernel (docs/roofline.md, "Calibrated kernels"), and the
// overhead-bound rule on the shipped Hopper entries: no kernel is called memory-bound where the
// overhead term is the largest.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "modelcost/fusion.h"
#include "modelcost/roofline.h"
#include "fusion/fusion_test_support.h"
#include "roofline/curved_device.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

constexpr int64_t kHeads = 4, kSeq = 96, kDim = 64;

// q k^T -> Softmax -> @ v over inputs k and v and a q the caller gives, fp16: one attention group.
std::unique_ptr<AnalysisRun> attention_over(ModelBuilder& b) {
  b.input("k", kFloat16, Shape{1, kHeads, kSeq, kDim});
  b.input("v", kFloat16, Shape{1, kHeads, kSeq, kDim});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  set_attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"o"});
  b.output("o");
  return analyse(b);
}

std::unique_ptr<AnalysisRun> attention_model() {
  ModelBuilder b;
  b.input("q", kFloat16, Shape{1, kHeads, kSeq, kDim});
  return attention_over(b);
}

// The same attention with q from a product of 4096 inputs: compute-bound on the curved device
// (about 55 FLOPs per byte against its gemm curve's 50).
std::unique_ptr<AnalysisRun> projected_attention_model() {
  ModelBuilder b;
  b.input("x", kFloat16, Shape{1, kHeads, kSeq, 4096});
  b.weight("wq", kFloat16, Shape{4096, kDim});
  b.node("MatMul", {"x", "wq"}, {"q"});
  return attention_over(b);
}

const NodeRoofline& attention_kernel(const RooflineReport& r) {
  for (size_t k = 0; k < r.groups.size(); ++k)
    if (r.fusion->groups[k].pattern == "attention") return r.groups[k];
  ADD_FAILURE() << "no attention group";
  return r.groups.at(0);
}

}  // namespace

TEST(KernelClass, AttentionGroupsRunOnTheAttentionCurveWithTheKeyLengthAsK) {
  const auto run = attention_model();
  const RooflineReport r = compute_roofline(run->analysis, curved_device());
  const NodeRoofline& a = attention_kernel(r);
  const double flops = 4.0 * kHeads * kSeq * kSeq * kDim;
  EXPECT_GE(a.flops, flops);  // the two products, and the softmax's few FLOPs per score
  EXPECT_LE(a.flops, flops * 1.05);
  EXPECT_DOUBLE_EQ(a.overhead_us, 5 + 20 * kSeq / 1000.0);
  EXPECT_DOUBLE_EQ(a.compute_us, a.flops / 20e12 * 1e6);
  EXPECT_DOUBLE_EQ(a.memory_us, a.bytes / 500e9 * 1e6);
  EXPECT_DOUBLE_EQ(a.predicted_us, a.overhead_us + std::max(a.compute_us, a.memory_us));  // no gap given
}

// Attention next to a compute-bound product (its math outlasting its traffic, as the LLM step
// counts it) runs at the GPU's power limit: its work (not its fixed
// cost or K loop) takes the device's attention_load_scale; without such a neighbour it does not.
TEST(KernelClass, AttentionBesideAComputeBoundProductTakesTheLoadScale) {
  Device d = curved_device();
  d.achievable.attention_load_scale = 1.3;
  const auto projected = projected_attention_model();
  const RooflineReport r = compute_roofline(projected->analysis, d);
  const RooflineReport alone = compute_roofline(projected->analysis, curved_device());
  bool product_is_compute_bound = false;
  for (size_t k = 0; k < r.groups.size(); ++k)
    if (r.fusion->groups[k].kernel.cls == KernelClass::kGemm && r.groups[k].launches)
      product_is_compute_bound = r.groups[k].compute_us >= r.groups[k].memory_us;
  ASSERT_TRUE(product_is_compute_bound);
  const NodeRoofline &a = attention_kernel(r), &base = attention_kernel(alone);
  const double work = std::max(base.compute_us, base.memory_us);
  EXPECT_NEAR(a.predicted_us, base.predicted_us + 0.3 * work, 1e-9);
  EXPECT_NEAR(a.overhead_us, base.overhead_us, 1e-12);
  // The attention alone (no product beside it) keeps its curve.
  const auto plain = attention_model();
  const RooflineReport loaded = compute_roofline(plain->analysis, d), unloaded = compute_roofline(plain->analysis, curved_device());
  EXPECT_DOUBLE_EQ(attention_kernel(loaded).predicted_us, attention_kernel(unloaded).predicted_us);
}

// Inside a whole model's graph a kernel's work runs longer than in the curve's replays of it
// alone: the K loop, math and traffic scale by the device's in-graph work scale, the fixed cost not.
TEST(KernelClass, TheInGraphWorkScaleStretchesTheWorkNotTheFixedCost) {
  const auto run = attention_model();
  Device d = curved_device();
  d.achievable.in_graph_work_scale = 1.25;
  const RooflineReport plain = compute_roofline(run->analysis, curved_device());
  const RooflineReport scaled = compute_roofline(run->analysis, d);
  const NodeRoofline& a = attention_kernel(plain);
  const NodeRoofline& b = attention_kernel(scaled);
  EXPECT_DOUBLE_EQ(b.overhead_us, 5 + 1.25 * 20 * kSeq / 1000.0);
  EXPECT_DOUBLE_EQ(b.compute_us, 1.25 * a.compute_us);
  EXPECT_DOUBLE_EQ(b.memory_us, 1.25 * a.memory_us);
  EXPECT_NEAR(b.predicted_us - 5, 1.25 * (a.predicted_us - 5), 1e-9);
}

TEST(KernelClass, AnEntryWithoutAnAttentionCurveTimesAttentionAsAGemm) {
  const auto run = attention_model();
  Device d = curved_device();
  d.achievable.kernel_curves.erase("attention");
  const RooflineReport roofline = compute_roofline(run->analysis, d);  // kept alive: a refers into it
  const NodeRoofline& a = attention_kernel(roofline);
  EXPECT_DOUBLE_EQ(a.overhead_us, 4 + 1 * kSeq / 1000.0);  // the gemm curve, K = the key length
  EXPECT_DOUBLE_EQ(a.compute_us, a.flops / 50e12 * 1e6);
  EXPECT_DOUBLE_EQ(a.memory_us, a.bytes / 1000e9 * 1e6);
}

// x [1,16,8,8] -> 1x1 Conv to 32 channels (+ bias) -> SiLU, fp16: one epilogue group whose
// activation cuDNN's fixed fused call cannot take: one launch, the epilogue priced as a pointwise pass.
TEST(KernelClass, ConvWithACompiledEpilogueIsOneLaunchPlusThePointwisePass) {
  ModelBuilder b;
  b.input("x", kFloat16, Shape{1, 16, 8, 8});
  b.weight("w", kFloat16, {32, 16, 1, 1});
  b.weight("bias", kFloat16, {32});
  b.node("Conv", {"x", "w", "bias"}, {"c"});
  b.node("Sigmoid", {"c"}, {"s"});
  b.node("Mul", {"c", "s"}, {"y"});
  b.output("y");
  const auto run = analyse(b);
  Device d = curved_device();
  d.achievable.kernel_curves["conv1x1"] = curve(4, 1, 50, 1000);
  const RooflineReport r = compute_roofline(run->analysis, d);
  ASSERT_EQ(r.groups.size(), 1u);
  const NodeRoofline& g = r.groups[0];
  const double x = 16 * 64 * 2, w = 32 * 16 * 2, bias = 32 * 2, c = 32 * 64 * 2;
  const double conv_us = 4 + 16 / 1000.0 + std::max(2.0 * 32 * 16 * 64 / 50e12, (x + w + bias + c) / 1000e9) * 1e6;
  const double epilogue_us = (c + c) / 2000e9 * 1e6;  // re-reads the conv's output, writes y: no launch of its own
  EXPECT_NEAR(g.predicted_us, conv_us + epilogue_us, 1e-6);
  EXPECT_DOUBLE_EQ(g.overhead_us, 4 + 16 / 1000.0);
  EXPECT_EQ(g.bound, Bound::kOverhead);
  EXPECT_DOUBLE_EQ(g.bytes, x + w + bias + c);  // the group's boundary, as reported
}

// x [64,196] @ w [196,384] + bias -> erf GELU: cuBLASLt takes the GELU into the GEMM's epilogue only
// where the operand rows are whole 16-byte units. 196 fp16 elements (392 bytes) are not: the GELU
// runs as a second kernel, priced as the product plus the traffic of a pass over its output. In
// fp32 (784 bytes) the rows are aligned and the group is one launch.
TEST(KernelClass, TheGeluOfAnUnalignedGemmIsASecondKernelAtTheDtypeThatMisalignsIt) {
  ModelBuilder b = gemm_bias_gelu(64, 196, 384);
  const auto run = analyse(b);
  RooflineOptions half, single;
  half.dtype = "fp16";
  single.dtype = "fp32";
  const RooflineReport h = compute_roofline(run->analysis, curved_device(), half);
  const RooflineReport s = compute_roofline(run->analysis, curved_device(), single);
  ASSERT_EQ(h.groups.size(), 1u);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_TRUE(h.groups[0].library_tail);
  EXPECT_FALSE(s.groups[0].library_tail);
  const double x = 64 * 196 * 2, w = 196 * 384 * 2, bias = 384 * 2, out = 64 * 384 * 2;
  const double gemm_us = 4 + 196 / 1000.0 + std::max(2.0 * 64 * 196 * 384 / 50e12, (x + w + out) / 1000e9) * 1e6;
  const double constants = 3 * 2;  // the GELU's 0.5, 1 and sqrt 2
  const double second_us = (out + bias + constants + out) / 2000e9 * 1e6;  // the product read back, y written
  EXPECT_NEAR(h.groups[0].predicted_us, gemm_us + second_us, 1e-6);
}

TEST(KernelClass, TheClassNamesIncludeAttentionAsAMatrixClass) {
  const auto& names = kernel_class_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "attention"), names.end());
  EXPECT_TRUE(kernel_class_is_matrix("attention"));
  EXPECT_FALSE(kernel_class_is_matrix("pointwise"));
}

// A curve named after a plan class prices that class with the same terms: a K loop and a FLOP rate
// for the matrix classes, bytes alone for the others.
TEST(KernelClass, EveryCurveOfAPlanClassAgreesWithThePlanOnMatrixWork) {
  int named = 0;
  for (KernelClass c : kAllKernelClasses) {
    const auto& names = kernel_class_names();
    if (std::find(names.begin(), names.end(), kernel_class_name(c)) == names.end()) continue;
    ++named;
    EXPECT_EQ(kernel_class_is_matrix(std::string(kernel_class_name(c))), kernel_class_is_matrix(c)) << kernel_class_name(c);
  }
  EXPECT_EQ(named, 12);  // gemm, the four convs, attention, pointwise, reduction, norm, pooling, layout_copy, gather_scatter
}

// On the shipped H100 and H200 entries (calibrated and derived curves), for every kernel of both
// views of the shared models at batch 1 and 32: overhead-bound exactly where the overhead term is
// the largest, and then never memory-bound.
TEST(KernelClass, OverheadBoundExactlyWhereTheOverheadTermIsLargest) {
  if (!shared_models_present()) GTEST_SKIP() << "shared models not present";
  const HardwareDb db = load_hardware_db({}, false);
  size_t overhead = 0, checked = 0;
  for (const char* file : {"mobilenet_v2_op13.onnx", "bert_base_op17.onnx"})
    for (int64_t batch : {1, 32}) {
      ShapeOptions shapes;
      shapes.dims["batch"] = batch;
      if (std::string(file).rfind("bert", 0) == 0) shapes.dims["seq"] = 128;
      const auto run = analyse_file(shared_model(file), shapes);
      for (const char* gpu : {"h100-sxm", "h200"}) {
        RooflineOptions options;
        options.dtype = "fp16";
        const RooflineReport r = compute_roofline(run->analysis, db.resolve(gpu), options);
        for (const auto* kernels : {&r.nodes, &r.groups})
          for (const NodeRoofline& k : *kernels) {
            if (!k.launches) continue;
            ++checked;
            const bool largest = k.overhead_us > std::max(k.compute_us, k.memory_us);
            EXPECT_EQ(k.bound == Bound::kOverhead, largest) << file << " " << gpu << " batch " << batch;
            if (largest) EXPECT_NE(k.bound, Bound::kMemory);
            overhead += largest;
          }
      }
    }
  EXPECT_GT(overhead, 0u);  // the rule was exercised
  EXPECT_GT(checked, overhead);
}

}  // namespace modelcost::testing
