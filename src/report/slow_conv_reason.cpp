#include "report/slow_conv_reason.h"

#include <fmt/format.h>

namespace modelcost {
namespace {

bool is_conv(KernelClass c) {
  return c == KernelClass::kConv || c == KernelClass::kConv1x1 || c == KernelClass::kGroupedConv ||
         c == KernelClass::kDepthwise;
}

// Channels in per group: K is channels per group x taps.
double channels_per_group(const KernelShape& k) { return k.taps > 0 ? k.k / k.taps : k.k; }

// Tensor-core kernels step through channels in 8-wide (fp16 16-byte) pieces.
constexpr double kTensorCoreChannels = 8;
// A kernel predicted under this is mostly launch and fill: its ratio says little about the shape.
constexpr double kFewMicroseconds = 5;
// Windows at least this wide (7x7) leave the depthwise kernels' register tiles.
constexpr double kLargeWindowTaps = 49;
// Reductions shorter than this leave a GEMM tile's loads and stores around too little math: such
// convs stream at a third of the memory rate (the zoo's 1x1 convs of 24-168 input channels at
// batch 32: 0.8-1.2 TB/s on the H100).
constexpr double kShortReduction = 256;

}  // namespace

bool is_slow_conv(const SlowConv& c) {
  return is_conv(c.kernel.cls) && c.predicted_us > 0 && c.measured_us > kSlowConvRatio * c.predicted_us;
}

std::string slow_conv_reason(const SlowConv& c) {
  const KernelShape& k = c.kernel;
  const double in_per_group = channels_per_group(k);
  if (k.cls == KernelClass::kGroupedConv)
    return fmt::format("grouped conv of {:g} groups of {:g} -> {:g} channels: neither cuDNN's grouped kernels nor a "
                       "dense conv over block-diagonal filters runs groups this narrow near the tensor-core rate",
                       k.groups, in_per_group, k.group_width);
  if (k.cls == KernelClass::kDepthwise && k.taps >= kLargeWindowTaps)
    return fmt::format("depthwise conv with a {:g}-tap window: past the register tiles of the depthwise kernels", k.taps);
  if (in_per_group < kTensorCoreChannels)
    return fmt::format("{:g} input channels per group: fewer than the {:g} a tensor-core conv kernel steps through", in_per_group,
                       kTensorCoreChannels);
  if ((k.cls == KernelClass::kConv1x1 || k.cls == KernelClass::kConv) && k.k < kShortReduction)
    return fmt::format("a reduction of only {:g}: the library's GEMM tiles spend their time loading and storing, far "
                       "off the memory rate", k.k);
  if (c.runner.find("algo 0") != std::string::npos)
    return "cuDNN offered only its generic implicit-GEMM algorithm (algo 0) for this shape";
  if (c.predicted_us < kFewMicroseconds)
    return fmt::format("a kernel of {:.1f} us predicted: launch and fill time, not the shape, set its time", c.predicted_us);
  return "";
}

}  // namespace modelcost
