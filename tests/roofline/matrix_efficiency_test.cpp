#include "../../src/roofline/matrix_efficiency.h"

#include <gtest/gtest.h>

namespace modelcost::testing {
namespace {

// 132 SMs of 1 TFLOP/s each, 1 TB/s: tile times come out in round microseconds.
const SmArray kSms{132, 132e12, 1e12};

TEST(MatrixEfficiency, BigSquareGemmStaysAtPeak) {
  const GemmShape g{8192, 8192, 8192, 1};
  const TileChoice t = best_tiling(g, kSms);
  const double peak_us = 2 * 8192.0 * 8192 * 8192 / kSms.flops_per_s * 1e6;
  EXPECT_EQ(t.splits, 1);
  // 64x64 tiles: 16384 tiles in ceil(16384 / 132) = 125 waves, 124.12 of them full.
  EXPECT_DOUBLE_EQ(t.us, 125 * 2 * 64.0 * 64 * 8192 / 1e12 * 1e6);
  EXPECT_LT(t.us / peak_us, 1.01);
}

TEST(MatrixEfficiency, SmallConvGemmIsWaveBound) {
  // A 7x7x512 -> 512 3x3 conv at batch 1: M = 49, N = 512, K = 512 * 9 = 4608 (72 blocks of 64).
  const TileChoice t = best_tiling({49, 512, 4608, 1}, kSms);
  // Best by hand: 64x64 tiles, 1 x 8 of them, split 12 ways = 96 tiles in one wave, each over
  // ceil(72 / 12) = 6 K blocks (384): 2*64*64*384 / 1e12 s = 3.145728 us; the fp32 partials
  // 2 * 49*512 * 12 * 4 B = 2408448 B at 1 TB/s add 2.408448 us.
  EXPECT_EQ(t.tile_m, 64);
  EXPECT_EQ(t.tile_n, 64);
  EXPECT_EQ(t.splits, 12);
  EXPECT_EQ(t.waves, 1);
  EXPECT_NEAR(t.us, 3.145728 + 2.408448, 1e-9);
  const double peak_us = 2 * 49.0 * 512 * 4608 / kSms.flops_per_s * 1e6;  // 1.75 us at full peak
  EXPECT_GT(t.us / peak_us, 3);  // 3.17 x the plain roofline
}

// One Conv node x -> y with weight w in its own graph, MACs as the cost rule counts them.
struct ConvNode {
  Graph graph;
  NodeAnalysis analysis;
  ConvNode(const Shape& x, const Shape& w, const Shape& y) {
    for (const Shape* s : {&x, &w, &y}) {
      TensorInfo t;
      t.shape = *s;
      t.has_shape = true;
      graph.tensors.push_back(t);
    }
    Node n;
    n.op_type = "Conv";
    n.inputs = {0, 1};
    n.outputs = {2};
    graph.nodes.push_back(n);
    analysis.node = &graph.nodes[0];
    analysis.graph = &graph;
    analysis.cost.known = true;
    // MACs = output elements x input channels per group x kernel taps.
    analysis.cost.macs = element_count(y) * w[1] * element_count(Shape(w.begin() + 2, w.end()));
  }
};

TEST(MatrixEfficiency, KernelClassesFollowTheConvShape) {
  const ConvNode pointwise({1, 64, 56, 56}, {256, 64, 1, 1}, {1, 256, 56, 56});
  const KernelShape p = node_kernel(pointwise.analysis);
  EXPECT_EQ(p.cls, KernelClass::kConv1x1);
  EXPECT_DOUBLE_EQ(p.k, 64);
  const ConvNode dense({1, 512, 7, 7}, {512, 512, 3, 3}, {1, 512, 7, 7});
  const KernelShape d = node_kernel(dense.analysis);
  EXPECT_EQ(d.cls, KernelClass::kConv);
  EXPECT_DOUBLE_EQ(d.k, 4608);  // 512 channels x 9 taps
  const ConvNode depthwise({1, 96, 28, 28}, {96, 1, 5, 5}, {1, 96, 28, 28});
  const KernelShape w = node_kernel(depthwise.analysis);
  EXPECT_EQ(w.cls, KernelClass::kDepthwise);
  EXPECT_DOUBLE_EQ(w.k, 25);  // its taps
  const ConvNode grouped({1, 128, 28, 28}, {128, 4, 3, 3}, {1, 128, 28, 28});
  const KernelShape g = node_kernel(grouped.analysis);
  EXPECT_EQ(g.cls, KernelClass::kGroupedConv);
  EXPECT_DOUBLE_EQ(g.k, 36);  // 4 channels per group x 9 taps
  EXPECT_DOUBLE_EQ(g.group_width, 4);
}

TEST(MatrixEfficiency, BatchedGemmsShareTheWaves) {
  // 12 heads of a 128x128 (K = 64) product: 48 tiles of 64x64 in one wave, no split (1 K block).
  const TileChoice t = best_tiling({128, 128, 64, 12}, kSms);
  EXPECT_EQ(t.splits, 1);
  EXPECT_EQ(t.waves, 1);
  EXPECT_DOUBLE_EQ(t.us, 2 * 64.0 * 64 * 64 / 1e12 * 1e6);
}

}  // namespace
}  // namespace modelcost::testing
