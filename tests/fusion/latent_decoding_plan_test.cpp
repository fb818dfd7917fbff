// The plan of MLA's absorbed decode attention (latent decoding) the runtime launches and the
// prediction prices.
#include "fusion/latent_decoding_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace modelcost::testing {
namespace {

LatentDecodingShape mla(int batch, int heads, int64_t context) { return {batch, heads, 512, 64, context, context}; }

// Every chunk whole tiles and holding at least one position (the kernel needs both), the chunks
// covering the context, and one wave: never more blocks than the SMs hold once a sequence's head
// tiles do, and more than half of them wherever the context has positions enough.
TEST(LatentDecodingPlan, ChunksCoverTheContextAndFillTheGpu) {
  for (const int sms : {1, 2, 66, 132, 144})
    for (const int batch : {1, 3, 32, 256})
      for (const int heads : {1, 16, 20, 128})
        for (const int64_t context : {1, 63, 64, 300, 1000, 4095, 32768, 163840}) {
          const LatentDecodingSplit split = plan_latent_decoding(mla(batch, heads, context), sms);
          const int64_t blocks = int64_t(batch) * latent_decoding_head_tiles(heads) * split.splits;
          SCOPED_TRACE(::testing::Message() << sms << " SMs, batch " << batch << ", " << heads << " heads, context " << context
                                          << ": " << split.splits << " chunks of " << split.chunk);
          EXPECT_GE(split.chunk, 64);
          EXPECT_EQ(split.chunk % 64, 0);
          EXPECT_GE(int64_t(split.splits) * split.chunk, context);
          EXPECT_LT(int64_t(split.splits - 1) * split.chunk, context);
          EXPECT_LE(split.splits, latent_decoding_most_splits);
          const int64_t per_chunk = int64_t(batch) * latent_decoding_head_tiles(heads);
          if (split.splits > 1 && context <= int64_t(64) * latent_decoding_most_splits) EXPECT_LE(blocks, sms);
          if (context >= 64 * sms) EXPECT_GT(2 * blocks + per_chunk, sms);
        }
}

// DeepSeek-V3 over 8 GPUs (16 heads), one sequence: one tile per chunk is as far as it splits.
// 128 heads at batch 4: 32 blocks per chunk leave room for 4 chunks of 2048 on 132 SMs.
TEST(LatentDecodingPlan, SplitsAsFarAsOneWaveAllows) {
  const LatentDecodingSplit one = plan_latent_decoding(mla(1, 16, 4096), 132);
  EXPECT_EQ(one.chunk, 64);
  EXPECT_EQ(one.splits, 64);
  const LatentDecodingSplit wide = plan_latent_decoding(mla(4, 128, 8192), 132);
  EXPECT_EQ(wide.chunk, 2048);
  EXPECT_EQ(wide.splits, 4);
  const LatentDecodingSplit eight = plan_latent_decoding(mla(8, 16, 2048), 132);  // 16 chunks of 128: the bench's best
  EXPECT_EQ(eight.chunk, 128);
  EXPECT_EQ(eight.splits, 16);
  const LatentDecodingSplit whole = plan_latent_decoding(mla(256, 16, 2048), 132);  // a wave of sequences already
  EXPECT_EQ(whole.chunk, 2048);
  EXPECT_EQ(whole.splits, 1);
}

TEST(LatentDecodingPlan, WorkReadsTheCacheOncePerHeadTile) {
  const LatentDecodingShape shape = mla(4, 128, 8192);
  const LatentDecodingWork w = latent_decoding_work(shape, 132);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * 8 * 8192 * 576 * 2 + 4.0 * 128 * (576 + 512) * 2);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 4 * 128 * 8192 * (576 + 512));
  EXPECT_EQ(w.waves, 1);  // 32 x 4 = 128 blocks over 132 slots
  EXPECT_EQ(w.key_tiles, 32);
  // A block: its queries, its 32 tiles, its partial output; the merge reads every block's.
  const double partial = 4.0 * 16 * (512 + 2);
  EXPECT_DOUBLE_EQ(w.block_bytes, 2.0 * 16 * 576 + 32.0 * 64 * 576 * 2 + partial);
  EXPECT_DOUBLE_EQ(w.merge_bytes, 128 * partial + 2.0 * 4 * 128 * 512);
}

// Blocks enough without splitting (512 sequences, one chunk each): half the SMs, twice the waves;
// the bytes do not change.
TEST(LatentDecodingPlan, FewerSmsRunMoreWaves) {
  const LatentDecodingShape shape = mla(512, 16, 1024);
  const LatentDecodingWork full = latent_decoding_work(shape, 132), half = latent_decoding_work(shape, 66);
  EXPECT_EQ(full.waves, 4);
  EXPECT_EQ(half.waves, 8);
  EXPECT_DOUBLE_EQ(half.bytes, full.bytes);
}

// Shapes the kernel refuses are still planned and priced, without dividing by zero or overflowing.
TEST(LatentDecodingPlan, HostileShapesStillGetAPlan) {
  EXPECT_FALSE(latent_decoding_supports(mla(1, 0, 512)));
  EXPECT_FALSE(latent_decoding_supports({1, 16, 256, 64, 512, 512}));
  EXPECT_FALSE(latent_decoding_supports({1, 16, 512, 64, 513, 512}));
  EXPECT_FALSE(latent_decoding_supports(mla(1, 16, 0)));
  EXPECT_TRUE(latent_decoding_supports(mla(1, 20, 1000)));
  const int64_t huge = int64_t(1) << 40, most = std::numeric_limits<int64_t>::max();
  for (const LatentDecodingShape& s : {mla(0, 0, 512), mla(-3, -16, -1), mla(1, 16, 0), mla(1, 16, huge), mla(1, 16, most),
                                       mla(std::numeric_limits<int>::max(), std::numeric_limits<int>::max(), huge)})
    for (const int sms : {-1, 0, 1, 132, std::numeric_limits<int>::max()}) {
      const LatentDecodingSplit split = plan_latent_decoding(s, sms);
      EXPECT_GE(split.splits, 1);
      EXPECT_GE(split.chunk, 64);
      EXPECT_EQ(split.chunk % 64, 0);
      const LatentDecodingWork w = latent_decoding_work(s, sms);
      EXPECT_GE(w.waves, 0);
      EXPECT_GE(w.bytes, 0);
    }
  const LatentDecodingSplit far = plan_latent_decoding(mla(1, 16, huge), 132);
  EXPECT_GE(int64_t(far.splits) * far.chunk, huge);
  EXPECT_EQ(latent_decoding_work(mla(0, 16, 512), 132).waves, 0);  // no sequences, no work
}

}  // namespace
}  // namespace modelcost::testing
