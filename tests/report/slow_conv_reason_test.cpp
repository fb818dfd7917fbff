#include "report/slow_conv_reason.h"

#include <gtest/gtest.h>

namespace modelcost {
namespace {

KernelShape conv_shape(KernelClass cls, double channels_per_group, double taps, double groups = 1, double group_width = 0) {
  KernelShape k;
  k.cls = cls;
  k.taps = taps;
  k.k = channels_per_group * taps;
  k.groups = groups;
  k.group_width = group_width;
  return k;
}

TEST(SlowConvReason, OnlyConvsPastTwiceTheirPredictionAsk) {
  const KernelShape dense = conv_shape(KernelClass::kConv, 64, 9);
  EXPECT_FALSE(is_slow_conv({dense, "cudnn", 39.0, 20.0}));
  EXPECT_TRUE(is_slow_conv({dense, "cudnn", 41.0, 20.0}));
  EXPECT_FALSE(is_slow_conv({conv_shape(KernelClass::kGemm, 64, 0), "cublasLt", 100.0, 20.0}));
  EXPECT_FALSE(is_slow_conv({dense, "cudnn", 100.0, 0.0}));  // no prediction
}

TEST(SlowConvReason, NamesTheShapeOrTheLibrarysChoice) {
  // RegNetX's 24-channel groups.
  const std::string grouped = slow_conv_reason({conv_shape(KernelClass::kGroupedConv, 24, 9, 17, 24), "block-diagonal", 96.0, 16.0});
  EXPECT_NE(grouped.find("17 groups of 24 -> 24 channels"), std::string::npos) << grouped;
  EXPECT_NE(slow_conv_reason({conv_shape(KernelClass::kDepthwise, 1, 49, 384, 1), "own depthwise", 90.0, 20.0}).find("49-tap"),
            std::string::npos);
  // A stem over an RGB image.
  EXPECT_NE(slow_conv_reason({conv_shape(KernelClass::kConv, 3, 9), "cudnn", 128.0, 27.0}).find("3 input channels"),
            std::string::npos);
  EXPECT_NE(slow_conv_reason({conv_shape(KernelClass::kConv, 64, 9), "cudnn conv NHWC algo 0", 128.0, 27.0}).find("algo 0"),
            std::string::npos);
  EXPECT_NE(slow_conv_reason({conv_shape(KernelClass::kConv, 64, 9), "cudnn conv NHWC algo 1", 9.0, 4.0}).find("launch"),
            std::string::npos);
  // LR-ASPP's 1x1 conv of 24 input channels at batch 32.
  EXPECT_NE(slow_conv_reason({conv_shape(KernelClass::kConv1x1, 24, 1), "conv 1x1 as GEMM", 88.0, 37.0}).find("only 24"),
            std::string::npos);
  // Nothing known explains a wide dense conv under cuDNN's tuned algorithm: no reason is made up.
  EXPECT_EQ(slow_conv_reason({conv_shape(KernelClass::kConv, 64, 9), "cudnn conv NHWC algo 1", 90.0, 40.0}), "");
}

}  // namespace
}  // namespace modelcost
