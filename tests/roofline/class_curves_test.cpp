#include "../../src/roofline/class_curves.h"

#include <gtest/gtest.h>

#include "roofline/curved_device.h"

namespace modelcost::testing {
namespace {

// The curved device with a dense conv curve (4 us + 1 us per 1000 of K, 50 TFLOP/s, 1000 GB/s)
// and a grouped conv curve ten times slower at the math.
Device device_with_conv_curves() {
  Device d = curved_device();
  d.achievable.kernel_curves["conv"] = curve(4, 1, 50, 1000);
  d.achievable.kernel_curves["grouped_conv"] = curve(4, 1, 5, 1000);
  return d;
}

KernelShape grouped(double groups, double channels_per_group) {
  KernelShape k;
  k.cls = KernelClass::kGroupedConv;
  k.groups = groups;
  k.group_width = channels_per_group;
  k.taps = 9;
  k.k = channels_per_group * 9;
  return k;
}

TEST(ClassCurves, FewWideGroupsArePricedAsTheDenseConvOverBlockDiagonalFilters) {
  const Device d = device_with_conv_curves();
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  const KernelShape k = grouped(4, 24);
  const double flops = 1e9, bytes = 1e6, filters = 4 * 24 * k.k * 2;
  const auto priced = fastest_curve(d, k, peak, flops, bytes, filters);
  ASSERT_TRUE(priced);
  // Grouped: 4 + 0.216 + 1e9 / 5e12 s = 204.2 us; dense: 4 + 0.864 + 4e9 / 50e12 s = 84.9 us.
  EXPECT_DOUBLE_EQ(priced->curve.tflops, 50);
  EXPECT_DOUBLE_EQ(priced->k, 4 * k.k);
  EXPECT_DOUBLE_EQ(priced->flops, 4 * flops);
  EXPECT_DOUBLE_EQ(priced->bytes, bytes + 3 * filters);
  EXPECT_NEAR(priced->us(), 4 + 0.864 + 80, 1e-9);
}

TEST(ClassCurves, ManyGroupsKeepTheGroupedCurve) {
  const Device d = device_with_conv_curves();
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  // 128 groups: past the block-diagonal limit, whatever the dense price.
  const auto many = fastest_curve(d, grouped(128, 4), peak, 1e9, 1e6, 128 * 4 * 36 * 2);
  ASSERT_TRUE(many);
  EXPECT_DOUBLE_EQ(many->curve.tflops, 5);
  EXPECT_DOUBLE_EQ(many->flops, 1e9);
  // 32 groups of 4: 32x the math dense costs more than the grouped curve here.
  const auto narrow = fastest_curve(d, grouped(32, 4), peak, 1e9, 1e6, 32 * 4 * 36 * 2);
  ASSERT_TRUE(narrow);
  EXPECT_DOUBLE_EQ(narrow->curve.tflops, 5);
}

TEST(ClassCurves, OtherClassesArePricedOnTheirOwnCurve) {
  const Device d = device_with_conv_curves();
  KernelShape gemm;
  gemm.cls = KernelClass::kGemm;
  gemm.k = 4096;
  const auto priced = fastest_curve(d, gemm, choose_peak(d, MathPath::kTensor, "fp16"), 1e9, 1e6, 0);
  ASSERT_TRUE(priced);
  EXPECT_DOUBLE_EQ(priced->k, 4096);
  EXPECT_DOUBLE_EQ(priced->us(), d.achievable.kernel_curves.at("gemm").us(4096, 1e9, 1e6));
}

// Layout copies and gathers run on their own curve where the entry has one, else the pointwise one.
TEST(ClassCurves, LayoutCopiesFallBackToThePointwiseCurve) {
  Device d = curved_device();
  d.achievable.kernel_curves["pointwise"] = curve(2, 0, 0, 3000);
  KernelShape copy;
  copy.cls = KernelClass::kLayoutCopy;
  const PeakChoice peak = choose_peak(d, MathPath::kVector, "fp16");
  ASSERT_TRUE(class_curve(d, copy, peak));
  EXPECT_DOUBLE_EQ(class_curve(d, copy, peak)->gbps, 3000);
  d.achievable.kernel_curves["layout_copy"] = curve(1, 0, 0, 4000);
  EXPECT_DOUBLE_EQ(class_curve(d, copy, peak)->gbps, 4000);
}

// Attention of a head size its kernel pads runs the padded math: the rate falls by the padding.
TEST(ClassCurves, PaddedAttentionHeadsRunAtThePaddedRate) {
  Device d = curved_device();
  d.achievable.kernel_curves["attention"] = curve(5, 10, 120, 2000);
  KernelShape attention;
  attention.cls = KernelClass::kAttention;
  attention.k = 197;
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  const double full = class_curve(d, attention, peak)->tflops;
  attention.math_padding = 64.0 / 48.0;
  EXPECT_NEAR(class_curve(d, attention, peak)->tflops, full * 48.0 / 64.0, 1e-9);
}

}  // namespace
}  // namespace modelcost::testing
