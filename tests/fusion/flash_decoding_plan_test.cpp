// The flash-decoding plan the runtime launches and the prediction prices.
#include "fusion/flash_decoding_plan.h"

#include <gtest/gtest.h>

namespace modelcost::testing {
namespace {

TEST(FlashDecodingPlan, SplitsFillTheGpuWithoutOverflowingSharedMemory) {
  const FlashDecodingSplit few = plan_flash_decoding({1, 32, 4, 64, 2048, 2048}, 132);
  EXPECT_EQ(few.chunk, 64);  // the least chunk: 32 of them over the 2048 positions
  EXPECT_EQ(few.splits, 32);
  const FlashDecodingSplit many = plan_flash_decoding({32, 32, 4, 64, 2048, 2048}, 132);
  EXPECT_GE(many.splits * many.chunk, 2048);
  EXPECT_LE(8 * many.chunk, 8192);
  const FlashDecodingSplit mqa = plan_flash_decoding({64, 64, 1, 128, 4096, 4096}, 132);
  EXPECT_LE(64 * mqa.chunk, 8192);
}

// Llama-3-8B's decode over two GPUs, 32 sequences at 1024: 3 chunks of 352 positions, 384 blocks
// over 2 x 132 slots, so 2 waves whose slots each count a full chunk.
TEST(FlashDecodingPlan, WorkCountsWholeWavesOfChunks) {
  const FlashDecodingShape shape{32, 16, 4, 128, 1024, 1024};
  const FlashDecodingSplit split = plan_flash_decoding(shape, 132);
  EXPECT_EQ(split.chunk, 352);
  EXPECT_EQ(split.splits, 3);
  const FlashDecodingWork w = flash_decoding_work(shape, 132);
  EXPECT_EQ(w.waves, 2);
  EXPECT_EQ(w.k, 2000);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 264 * 4 * 128 * 4 * 352);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 32 * 4 * 1024 * 128 * 2 + 2.0 * 32 * 16 * 128 * 2);
}

// Half the SMs: half the slots, so the same blocks need more waves; the bytes do not change.
TEST(FlashDecodingPlan, FewerSmsRunMoreWaves) {
  const FlashDecodingShape shape{64, 32, 8, 128, 2048, 2048};
  const FlashDecodingWork full = flash_decoding_work(shape, 132), half = flash_decoding_work(shape, 66);
  EXPECT_GT(half.waves, full.waves);
  EXPECT_DOUBLE_EQ(half.bytes, full.bytes);
  EXPECT_EQ(flash_decoding_work({0, 32, 8, 128, 2048, 2048}, 132).waves, 0);  // no sequences, no work
}

// Shapes the kernel refuses (fewer query heads than KV heads, no KV heads) are still planned.
TEST(FlashDecodingPlan, ShapesTheKernelRefusesStillGetAPlan) {
  EXPECT_FALSE(flash_decoding_supports({4, 2, 8, 128, 512, 512}));
  EXPECT_GE(plan_flash_decoding({4, 2, 8, 128, 512, 512}, 132).splits, 1);
  EXPECT_GE(plan_flash_decoding({4, 2, 0, 128, 512, 512}, 132).splits, 1);
  EXPECT_GT(flash_decoding_work({4, 2, 8, 96, 512, 512}, 132).waves, 0);
}

}  // namespace
}  // namespace modelcost::testing
