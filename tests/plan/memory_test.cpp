#include <gtest/gtest.h>

#include "modelcost/plan.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// Inputs x, y [N,512] fp32 (2048 N bytes each), one weight W [512,1024] fp32 (2 MiB):
//   0: a = Relu(x)              2048 N
//   1: r = Reshape(a, [-1,512]) view of a: no new bytes
//   2: m = MatMul(r, W)         4096 N
//   3: g = Relu(m)              4096 N   (graph output)
//   4: s = Add(a, r)            2048 N
//   5: o = Add(s, y)            2048 N   (graph output)
// Lifetimes: x 0..0, y 0..5 (an input lives from the start), a=r 0..4 (one buffer), m 2..3,
// g 3..5 (an output lives to the end), s 4..5, o 5..5. Live bytes per step, in units of N:
//   0: x+y+a = 6144   1: y+a = 4096   2: y+a+m = 8192   3: y+a+m+g = 12288
//   4: y+a+g+s = 10240   5: y+g+s+o = 10240            -> peak 12288 N at node 3.
// A plain sum of every activation would be 20480 N; counting r as its own buffer, 14336 N.
ModelBuilder lifetime_graph() {
  ModelBuilder b;
  b.input("x", kFloat, std::vector<std::string>{"N", "512"});
  b.input("y", kFloat, std::vector<std::string>{"N", "512"});
  b.weight("W", kFloat, {512, 1024});
  b.ints("shape", {-1, 512});
  b.node("Relu", {"x"}, {"a"});
  b.node("Reshape", {"a", "shape"}, {"r"});
  b.node("MatMul", {"r", "W"}, {"m"});
  b.node("Relu", {"m"}, {"g"});
  b.node("Add", {"a", "r"}, {"s"});
  b.node("Add", {"s", "y"}, {"o"});
  b.output("g");
  b.output("o");
  return b;
}

std::unique_ptr<AnalysisRun> analyse_with_batch(const ModelBuilder& b, int64_t batch) {
  ShapeOptions options;
  options.dims["N"] = batch;
  return analyse(b, options);
}

}  // namespace

TEST(MemoryFootprint, PeakActivationFollowsTensorLifetimes) {
  const ModelBuilder b = lifetime_graph();
  for (int64_t n : {1, 4}) {
    auto run = analyse_with_batch(b, n);
    ASSERT_EQ(run->analysis.nodes.size(), 6u);
    ASSERT_EQ(run->analysis.nodes[3].node->name, "g");  // the builder's order is already topological
    const MemoryFootprint fp = memory_footprint(run->analysis);
    EXPECT_DOUBLE_EQ(fp.peak_activation_bytes, 12288.0 * n) << "batch " << n;
    EXPECT_EQ(fp.peak_node, 3u);
    // W: 512*1024*4 bytes, and the int64 shape constant [2]: 16 bytes.
    EXPECT_DOUBLE_EQ(fp.weights_bytes, 2097152 + 16);
  }
}

TEST(MemoryFootprint, DtypeRecastScalesFloatTensorsOnly) {
  auto run = analyse_with_batch(lifetime_graph(), 2);
  const MemoryFootprint fp = memory_footprint(run->analysis, "fp16");
  EXPECT_DOUBLE_EQ(fp.peak_activation_bytes, 6144.0 * 2);
  EXPECT_DOUBLE_EQ(fp.weights_bytes, 1048576 + 16);  // the int64 shape keeps 8 bytes per element
}

TEST(MemoryFootprint, SharedWeightCountsOnceAndViewsOfWeightsAreFree) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 64});
  b.weight("W", kFloat, {64, 64});
  b.ints("flat", {64, 64});
  b.node("Reshape", {"W", "flat"}, {"Wv"});  // a view of the weight: no activation bytes
  b.node("MatMul", {"x", "W"}, {"h"});
  b.node("MatMul", {"h", "Wv"}, {"o"});
  b.output("o");
  auto run = analyse(b);
  const MemoryFootprint fp = memory_footprint(run->analysis);
  EXPECT_DOUBLE_EQ(fp.weights_bytes, 64 * 64 * 4 + 16);
  // Step 1: x (input, read at 1) + h = 256 + 256; step 2: h + o = 512.
  EXPECT_DOUBLE_EQ(fp.peak_activation_bytes, 512);
}

}  // namespace modelcost::testing
