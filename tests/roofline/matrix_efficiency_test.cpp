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

TEST(MatrixEfficiency, BatchedGemmsShareTheWaves) {
  // 12 heads of a 128x128 (K = 64) product: 48 tiles of 64x64 in one wave, no split (1 K block).
  const TileChoice t = best_tiling({128, 128, 64, 12}, kSms);
  EXPECT_EQ(t.splits, 1);
  EXPECT_EQ(t.waves, 1);
  EXPECT_DOUBLE_EQ(t.us, 2 * 64.0 * 64 * 64 / 1e12 * 1e6);
}

}  // namespace
}  // namespace modelcost::testing
