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
  const auto priced = fastest_curve(d, k, peak, {flops, bytes, filters});
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
  const auto many = fastest_curve(d, grouped(128, 4), peak, {1e9, 1e6, 128 * 4 * 36 * 2});
  ASSERT_TRUE(many);
  EXPECT_DOUBLE_EQ(many->curve.tflops, 5);
  EXPECT_DOUBLE_EQ(many->flops, 1e9);
  // 32 groups of 4: 32x the math dense costs more than the grouped curve here.
  const auto narrow = fastest_curve(d, grouped(32, 4), peak, {1e9, 1e6, 32 * 4 * 36 * 2});
  ASSERT_TRUE(narrow);
  EXPECT_DOUBLE_EQ(narrow->curve.tflops, 5);
}

TEST(ClassCurves, OtherClassesArePricedOnTheirOwnCurve) {
  const Device d = device_with_conv_curves();
  KernelShape gemm;
  gemm.cls = KernelClass::kGemm;
  gemm.k = 4096;
  const auto priced = fastest_curve(d, gemm, choose_peak(d, MathPath::kTensor, "fp16"), {1e9, 1e6});
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

// A depthwise window of one tap (a per-channel scale and bias) streams as a pointwise kernel; wider
// windows take the depthwise curve.
TEST(ClassCurves, OneTapDepthwiseWindowsStreamAsPointwiseKernels) {
  Device d = curved_device();
  d.achievable.kernel_curves["pointwise"] = curve(2, 0, 0, 3000);
  d.achievable.kernel_curves["depthwise"] = curve(4, 80, 10, 1000);
  const PeakChoice peak = choose_peak(d, MathPath::kVector, "fp16");
  KernelShape depthwise;
  depthwise.cls = KernelClass::kDepthwise;
  depthwise.k = 1;
  EXPECT_DOUBLE_EQ(class_curve(d, depthwise, peak)->gbps, 3000);
  depthwise.k = 9;
  EXPECT_DOUBLE_EQ(class_curve(d, depthwise, peak)->gbps, 1000);
}

// A depthwise conv with its SiLU in the kernel takes the depthwise_swish curve, a dilated one the
// depthwise_dilated curve, where the entry has that curve; else the depthwise curve.
TEST(ClassCurves, DepthwiseVariantsFallBackToTheDepthwiseCurve) {
  struct Variant {
    const char* curve;
    bool swish;
    double dilation;
  };
  for (const Variant v : {Variant{"depthwise_swish", true, 1}, Variant{"depthwise_dilated", false, 2}}) {
    Device d = curved_device();
    d.achievable.kernel_curves["depthwise"] = curve(4, 80, 10, 1000);
    const PeakChoice peak = choose_peak(d, MathPath::kVector, "fp16");
    KernelShape depthwise;
    depthwise.cls = KernelClass::kDepthwise;
    depthwise.k = 9;
    depthwise.swish_epilogue = v.swish;
    depthwise.dilation = v.dilation;
    EXPECT_DOUBLE_EQ(class_curve(d, depthwise, peak)->gbps, 1000) << v.curve;
    d.achievable.kernel_curves[v.curve] = curve(2, 50, 10, 2500);
    EXPECT_DOUBLE_EQ(class_curve(d, depthwise, peak)->gbps, 2500) << v.curve;
    depthwise.swish_epilogue = false;
    depthwise.dilation = 1;
    EXPECT_DOUBLE_EQ(class_curve(d, depthwise, peak)->gbps, 1000) << v.curve;
  }
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

KernelShape gemm_shape(double n, double k) {
  KernelShape s;
  s.cls = KernelClass::kGemm;
  s.n = n;
  s.k = k;
  return s;
}

KernelShape dense_conv(double in_channels, double out_channels, double taps) {
  KernelShape s;
  s.cls = taps == 1 ? KernelClass::kConv1x1 : KernelClass::kConv;
  s.groups = 1;
  s.group_width = out_channels;
  s.taps = taps;
  s.k = in_channels * taps;
  return s;
}

// GEMM rows in whole 16-byte units; conv channels in multiples of 32, or for groups a power of two;
// dense windows undilated.
TEST(ClassCurves, TileAlignmentFollowsTheLibrariesTiles) {
  EXPECT_TRUE(tile_aligned(gemm_shape(384, 200), 2));
  EXPECT_FALSE(tile_aligned(gemm_shape(384, 196), 2));
  EXPECT_FALSE(tile_aligned(gemm_shape(100, 256), 2));
  EXPECT_TRUE(tile_aligned(gemm_shape(100, 196), 4));  // fp32: 4 elements fill 16 bytes
  EXPECT_TRUE(tile_aligned(gemm_shape(0, 196 * 8), 2)); // N not known: counts as aligned
  EXPECT_TRUE(tile_aligned(dense_conv(64, 256, 1), 2));
  EXPECT_FALSE(tile_aligned(dense_conv(36, 144, 1), 2));
  EXPECT_TRUE(tile_aligned(dense_conv(96, 96, 9), 2));
  EXPECT_FALSE(tile_aligned(dense_conv(408, 408, 9), 2));
  EXPECT_FALSE(tile_aligned(dense_conv(16, 16, 9), 2));
  EXPECT_FALSE(tile_aligned(dense_conv(3, 64, 49), 2));  // an image stem
  EXPECT_TRUE(tile_aligned(grouped(32, 16), 2));
  EXPECT_TRUE(tile_aligned(grouped(8, 64), 2));
  EXPECT_FALSE(tile_aligned(grouped(17, 24), 2));
  KernelShape dilated = dense_conv(256, 256, 9);
  dilated.dilation = 2;  // the implicit GEMM gathers its rows from scattered pixels
  EXPECT_FALSE(tile_aligned(dilated, 2));
  KernelShape depthwise;
  depthwise.cls = KernelClass::kDepthwise;
  depthwise.k = 9;
  EXPECT_TRUE(tile_aligned(depthwise, 2));
}

// An unaligned shape runs on its own curve where the entry has one, else on its class's.
TEST(ClassCurves, UnalignedShapesTakeTheirOwnCurveWhereCalibrated) {
  Device d = curved_device();
  d.achievable.kernel_curves["gemm"] = curve(2, 1, 800, 3000);
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  EXPECT_DOUBLE_EQ(class_curve(d, gemm_shape(384, 196), peak)->tflops, 800);
  d.achievable.kernel_curves["gemm_unaligned"] = curve(3, 4, 170, 2200);
  EXPECT_DOUBLE_EQ(class_curve(d, gemm_shape(384, 196), peak)->tflops, 170);
  EXPECT_DOUBLE_EQ(class_curve(d, gemm_shape(384, 200), peak)->tflops, 800);
  // A 1x1 conv with unaligned channels runs as an unaligned GEMM without a curve of its own.
  EXPECT_DOUBLE_EQ(class_curve(d, dense_conv(36, 144, 1), peak)->tflops, 170);
}

// A dense conv of a dilated window runs on the dilated curve where calibrated, else on the
// unaligned one; calibrate fits its calls to the curve that prices them.
TEST(ClassCurves, DilatedWindowsTakeTheDilatedCurveWhereCalibrated) {
  Device d = device_with_conv_curves();
  d.achievable.kernel_curves["conv_unaligned"] = curve(8, 0, 20, 500);
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  KernelShape dilated = dense_conv(256, 256, 9);
  dilated.dilation = 12;
  EXPECT_EQ(kernel_curve_name(dilated, 2), "conv_dilated");
  EXPECT_DOUBLE_EQ(class_curve(d, dilated, peak)->tflops, 20);
  d.achievable.kernel_curves["conv_dilated"] = curve(6, 0, 30, 700);
  EXPECT_DOUBLE_EQ(class_curve(d, dilated, peak)->tflops, 30);
  dilated.dilation = 1;
  EXPECT_EQ(kernel_curve_name(dilated, 2), "conv");
  EXPECT_DOUBLE_EQ(class_curve(d, dilated, peak)->tflops, 50);
}

// 17 groups of 24 channels over block-diagonal filters are one dense conv of 408 channels: an
// unaligned one, priced on the unaligned dense curve.
TEST(ClassCurves, BlockDiagonalFiltersTakeTheDenseConvsAlignment) {
  Device d = device_with_conv_curves();
  d.achievable.kernel_curves["conv_unaligned"] = curve(8, 0, 20, 500);
  const PeakChoice peak = choose_peak(d, MathPath::kTensor, "fp16");
  const KernelShape aligned = grouped(4, 32), unaligned = grouped(17, 24);
  const auto wide = fastest_curve(d, aligned, peak, {1e9, 1e6, 4 * 32 * aligned.k * 2});
  ASSERT_TRUE(wide);
  EXPECT_DOUBLE_EQ(wide->curve.tflops, 50);  // dense 128 channels: the aligned conv curve
  const auto narrow = fastest_curve(d, unaligned, peak, {1e9, 1e6, 17 * 24 * unaligned.k * 2});
  ASSERT_TRUE(narrow);
  EXPECT_DOUBLE_EQ(narrow->curve.tflops, 5);  // the grouped curve beats dense 408 channels at 20 TF
}

}  // namespace
}  // namespace modelcost::testing
