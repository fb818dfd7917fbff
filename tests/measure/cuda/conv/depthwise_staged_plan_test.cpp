// The staged depthwise kernel's plan, on the host: which geometries it takes, and that every tile
// it picks launches (at most 256 threads, within the shared memory limit, a thread's rows
// dividing the block's), covers the channels and fills the GPU where the work allows.
#ifdef MODELCOST_HAVE_CUDA

#include "conv/depthwise_staged_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace modelcost::testing {
namespace {

cuda::DepthwiseGeometry square(int64_t batch, int64_t channels, int64_t size, int kernel, int stride) {
  cuda::DepthwiseGeometry g{};
  g.batch = batch;
  g.channels = channels;
  g.in_h = g.in_w = size;
  g.out_h = g.out_w = (size + 2 * (kernel / 2) - kernel) / stride + 1;
  g.kernel_h = g.kernel_w = kernel;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = kernel / 2;
  g.dilation_h = g.dilation_w = 1;
  g.channels_last = true;
  return g;
}

TEST(DepthwiseStagedPlan, TakesUndilatedChannelsLastWindowsInWholePacks) {
  const auto g = square(32, 256, 56, 3, 1);
  EXPECT_TRUE(cuda::staged_applies(g, 2));
  EXPECT_FALSE(cuda::staged_applies(g, 4)) << "2-byte types only";
  auto other = g;
  other.channels = 36;  // not whole 16-byte packs
  EXPECT_FALSE(cuda::staged_applies(other, 2));
  other = g;
  other.dilation_h = other.dilation_w = 2;
  EXPECT_FALSE(cuda::staged_applies(other, 2));
  other = g;
  other.channels_last = false;
  EXPECT_FALSE(cuda::staged_applies(other, 2));
  other = g;
  other.multiplier = 2;
  EXPECT_FALSE(cuda::staged_applies(other, 2));
  other = square(32, 256, 56, 11, 1);  // no kernel compiled for 11 wide
  EXPECT_FALSE(cuda::staged_applies(other, 2));
  other = square(32, 256, 56, 3, 3);
  EXPECT_FALSE(cuda::staged_applies(other, 2));
}

TEST(DepthwiseStagedPlan, EveryTileLaunchesAndCoversTheChannels) {
  for (const int64_t batch : {1, 2, 32})
    for (const int64_t channels : {8, 48, 72, 96, 256, 520, 768, 1152})
      for (const int64_t size : {3, 7, 14, 37, 56, 112})
        for (const int kernel : {3, 5, 7, 9})
          for (const int stride : {1, 2})
            for (const int sms : {1, 132}) {
              const auto g = square(batch, channels, size, kernel, stride);
              const std::string where = std::to_string(batch) + "x" + std::to_string(channels) + "x" + std::to_string(size) +
                                        " k" + std::to_string(kernel) + " s" + std::to_string(stride) + " sms " +
                                        std::to_string(sms);
              ASSERT_TRUE(cuda::staged_applies(g, 2)) << where << ": every 3-9 wide window in whole packs";
              const cuda::StagedTile t = cuda::staged_tile(g, 2, sms);
              EXPECT_TRUE(t.thread_rows == 1 || t.thread_rows == 4) << where;
              EXPECT_GE(t.rows, t.thread_rows) << where;
              EXPECT_EQ(t.rows % t.thread_rows, 0) << where;
              EXPECT_EQ(t.cols % cuda::kStagedCols, 0) << where;
              EXPECT_EQ(t.pairs % 4, 0) << where << ": pairs copied 16 bytes at a time";
              EXPECT_GT(t.threads(), 0) << where;
              EXPECT_LE(t.threads(), cuda::kStagedMaxThreads) << where;
              EXPECT_LE(cuda::staged_shared_bytes(g, t, 2), cuda::kStagedSharedLimit) << where;
              EXPECT_EQ(t.in_h, (t.rows - 1) * stride + kernel) << where;
              EXPECT_EQ(t.in_w, (t.cols - 1) * stride + kernel) << where;
              const int64_t chunks = (channels / 2 + t.pairs - 1) / t.pairs;
              EXPECT_GE(chunks * t.pairs, channels / 2) << where;
              EXPECT_LT((chunks - 1) * t.pairs, channels / 2) << where << ": no empty chunk";
            }
}

TEST(DepthwiseStagedPlan, LargeWorkTakesFourByFourBlocksAndSmallWorkFillsTheSms) {
  // PVT-v2's first 3x3 at batch 32: 4 x 4 outputs a thread over an 8 x 16 tile of 64 channels.
  const cuda::StagedTile large = cuda::staged_tile(square(32, 256, 56, 3, 1), 2, 132);
  EXPECT_EQ(large.thread_rows, 4);
  EXPECT_EQ(large.rows, 8);
  EXPECT_EQ(large.cols, 16);
  EXPECT_EQ(large.pairs, 32);
  // ConvNeXt's first 7x7 at batch 1 (96 channels, 56 x 56): 4 x 4 blocks would give the 132 SMs
  // 10,752 threads; one row a thread gives at least eight warps an SM.
  const auto small_g = square(1, 96, 56, 7, 1);
  const cuda::StagedTile small = cuda::staged_tile(small_g, 2, 132);
  EXPECT_EQ(small.thread_rows, 1);
  EXPECT_EQ(small.pairs, 24) << "96 channels as two even chunks";
  EXPECT_GE(cuda::staged_grid_threads(small_g, small), int64_t(8) * 32 * 132);
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
