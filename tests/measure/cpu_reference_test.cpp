#include "measure/cpu_reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace modelcost::testing {
namespace {

// Runs node `name` of the model on the given input values (one vector per input).
std::vector<float> run_reference(const AnalysisRun& run, const std::string& name, const std::vector<std::vector<float>>& values) {
  const NodeSpec spec = make_node_spec(run.node(name), "");
  const OpPlan plan = plan_operation(spec);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    HostTensor t(spec.inputs[i].shape, spec.inputs[i].dtype);
    if (i < values.size() && !values[i].empty()) t.data = values[i];
    else t = random_input(spec, plan, i, 3);
    inputs.push_back(t);
  }
  std::vector<const HostTensor*> in;
  for (auto& t : inputs) in.push_back(&t);
  auto out = make_outputs(spec);
  run_cpu_reference(spec, plan, in, out);
  return out[0].data;
}

}  // namespace

TEST(MeasureCpuReference, ConvWithPaddingStrideAndBias) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 3, 3}).input("w", kFloat, Shape{1, 1, 2, 2}).input("b", kFloat, Shape{1});
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"y"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "strides", std::vector<int64_t>{2, 2});
  b.output("y");
  auto run = analyse(b);
  // x = 1..9, w = [[1,2],[3,4]], bias 10. Output 2x2 at input rows/cols -1 and 1:
  // (0,0): only x[0][0]*4 = 4; (0,1): x[0][1]*3 + x[0][2]*4 = 6 + 12 = 18;
  // (1,0): x[1][0]*2 + x[2][0]*4 = 8 + 28 = 36; (1,1): 5*1 + 6*2 + 8*3 + 9*4 = 77.
  auto y = run_reference(*run, "y", {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4}, {10}});
  EXPECT_EQ(y, (std::vector<float>{14, 28, 46, 87}));
}

TEST(MeasureCpuReference, MaxAndAveragePool) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 1, 4, 4});
  auto& mp = b.node("MaxPool", {"x"}, {"m"});
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(mp, "strides", std::vector<int64_t>{2, 2});
  auto& ap = b.node("AveragePool", {"x"}, {"a"});
  set_attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(ap, "strides", std::vector<int64_t>{3, 3});
  b.output("m").output("a");
  auto run = analyse(b);
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  EXPECT_EQ(run_reference(*run, "m", {x}), (std::vector<float>{5, 7, 13, 15}));
  // Windows rows/cols {-1,0,1} and {2,3,4}; padding excluded from the count.
  // (0,0): 0,1,4,5 -> 2.5; (0,1): 2,3,6,7 -> 4.5; (1,0): 8,9,12,13 -> 10.5; (1,1): 10,11,14,15 -> 12.5.
  EXPECT_EQ(run_reference(*run, "a", {x}), (std::vector<float>{2.5, 4.5, 10.5, 12.5}));
}

TEST(MeasureCpuReference, GemmTransposedWithRowBias) {
  ModelBuilder b;
  b.input("a", kFloat, Shape{2, 3}).input("w", kFloat, Shape{2, 3}).input("c", kFloat, Shape{2});
  auto& g = b.node("Gemm", {"a", "w", "c"}, {"y"});
  set_attr(g, "transB", int64_t{1});
  set_attr(g, "alpha", 2.0f);
  b.output("y");
  auto run = analyse(b);
  // a = [[1,2,3],[4,5,6]], w = [[1,0,1],[0,1,0]]: a*w^T = [[4,2],[10,5]]; *2 + [100, 200].
  auto y = run_reference(*run, "y", {{1, 2, 3, 4, 5, 6}, {1, 0, 1, 0, 1, 0}, {100, 200}});
  EXPECT_EQ(y, (std::vector<float>{108, 204, 120, 210}));
}

TEST(MeasureCpuReference, SoftmaxAndLayerNorm) {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{1, 2});
  b.node("Softmax", {"x"}, {"s"});
  b.input("z", kFloat, Shape{1, 4}).input("scale", kFloat, Shape{4});
  b.node("LayerNormalization", {"z", "scale"}, {"n"});
  b.output("s").output("n");
  auto run = analyse(b);
  auto s = run_reference(*run, "s", {{0, std::log(3.0f)}});
  EXPECT_NEAR(s[0], 0.25, 1e-6);
  EXPECT_NEAR(s[1], 0.75, 1e-6);
  // z = 1,2,3,4: mean 2.5, variance 1.25.
  auto n = run_reference(*run, "n", {{1, 2, 3, 4}, {1, 1, 1, 1}});
  EXPECT_NEAR(n[0], -1.5 / std::sqrt(1.25 + 1e-5), 1e-5);
  EXPECT_NEAR(n[3], 1.5 / std::sqrt(1.25 + 1e-5), 1e-5);
}

TEST(MeasureCpuReference, InstanceAndGroupNorm) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{1, 2, 2}).input("s2", kFloat, Shape{2}).input("b2", kFloat, Shape{2});
  b.node("InstanceNormalization", {"x", "s2", "b2"}, {"in"});
  b.input("g", kFloat, Shape{1, 4, 1}).input("s4", kFloat, Shape{4}).input("b4", kFloat, Shape{4});
  set_attr(b.node("GroupNormalization", {"g", "s4", "b4"}, {"gn"}), "num_groups", int64_t{2});
  b.input("s1", kFloat, Shape{2}).input("b1", kFloat, Shape{2});
  set_attr(b.node("GroupNormalization", {"g", "s1", "b1"}, {"gn_per_group"}), "num_groups", int64_t{2});
  b.output("in").output("gn").output("gn_per_group");
  auto run = analyse(b);
  // Channel 0 is {1, 3} (mean 2, variance 1), channel 1 {5, 5} (variance 0: y is the bias).
  const float inv = 1 / std::sqrt(1 + 1e-5f);
  auto in = run_reference(*run, "in", {{1, 3, 5, 5}, {2, 7}, {10, 20}});
  EXPECT_NEAR(in[0], 10 - 2 * inv, 1e-5);
  EXPECT_NEAR(in[1], 10 + 2 * inv, 1e-5);
  EXPECT_NEAR(in[2], 20, 1e-5);
  // Groups {1, 3} and {5, 7}; scale and bias per channel, then per group.
  auto gn = run_reference(*run, "gn", {{1, 3, 5, 7}, {1, 2, 3, 4}, {0, 0, 100, 100}});
  EXPECT_NEAR(gn[1], 2 * inv, 1e-5);
  EXPECT_NEAR(gn[2], 100 - 3 * inv, 1e-5);
  auto per_group = run_reference(*run, "gn_per_group", {{1, 3, 5, 7}, {1, 2}, {0, 100}});
  EXPECT_NEAR(per_group[1], inv, 1e-5);
  EXPECT_NEAR(per_group[2], 100 - 2 * inv, 1e-5);
}

TEST(MeasureCpuReference, GatherPadAndBroadcastAdd) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{3, 2}).input("i", kInt64, Shape{2});
  b.node("Gather", {"x", "i"}, {"g"});
  b.input("p", kFloat, Shape{1, 2}).ints("pads", {0, 1, 0, 2});
  b.node("Pad", {"p", "pads"}, {"q"});
  b.input("u", kFloat, Shape{2, 2}).input("v", kFloat, Shape{2});
  b.node("Add", {"u", "v"}, {"w"});
  b.output("g").output("q").output("w");
  auto run = analyse(b);
  EXPECT_EQ(run_reference(*run, "g", {{1, 2, 3, 4, 5, 6}, {2, 0}}), (std::vector<float>{5, 6, 1, 2}));
  EXPECT_EQ(run_reference(*run, "q", {{7, 8}}), (std::vector<float>{0, 7, 8, 0, 0}));
  EXPECT_EQ(run_reference(*run, "w", {{1, 2, 3, 4}, {10, 20}}), (std::vector<float>{11, 22, 13, 24}));
}

TEST(MeasureCpuReference, Fp16OutputsAreRounded) {
  HostTensor t({3}, kFloat16);
  t.data = {1.0f, 1.0001f, 65504.f};
  round_to_dtype(t);
  EXPECT_EQ(t.data[1], 1.0f);  // fp16 spacing at 1 is 2^-10
  EXPECT_EQ(t.data[2], 65504.f);
}

TEST(MeasureCpuReference, BatchNormAndWhere) {
  ModelBuilder b(15);
  b.input("x", kFloat, Shape{1, 2, 2});
  for (const char* p : {"s", "bb", "m", "v"}) b.input(p, kFloat, Shape{2});
  set_attr(b.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"bn"}), "epsilon", 0.0f);
  b.input("c", kBool, Shape{2, 1}).input("a", kFloat, Shape{2, 2}).input("z", kFloat, Shape{2});
  b.node("Where", {"c", "a", "z"}, {"w"});
  b.output("bn").output("w");
  auto run = analyse(b);
  // Channel 0: (x - 1) * 2 / sqrt(4) + 10; channel 1: (x - 0) * 3 / sqrt(9) - 1.
  auto bn = run_reference(*run, "bn", {{1, 3, 5, 7}, {2, 3}, {10, -1}, {1, 0}, {4, 9}});
  EXPECT_EQ(bn, (std::vector<float>{10, 12, 4, 6}));
  // Row 0 takes a, row 1 takes z.
  auto w = run_reference(*run, "w", {{1, 0}, {1, 2, 3, 4}, {-5, -6}});
  EXPECT_EQ(w, (std::vector<float>{1, 2, -5, -6}));
}

}  // namespace modelcost::testing
