// The curve of each kernel class (class_curves.h).
#include "class_curves.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace modelcost {

namespace {

// The curves that may price a kernel, in order: an unaligned shape's own where calibrate measured
// one, then its class's, else the curve of the library kernel it is built like (docs/roofline.md,
// "Kernel classes"). A depthwise window of one tap is a per-channel scale and bias: it streams its
// input to its output as a pointwise kernel does, with none of a window's reuse to pay for.
std::vector<const char*> curve_keys(const KernelShape& kernel, bool aligned) {
  switch (kernel.cls) {
    case KernelClass::kGemm:
      if (!aligned) return {"gemm_unaligned", "gemm"};
      return {"gemm"};
    case KernelClass::kConv:
      if (kernel.dilation > 1) return {"conv_dilated", "conv_unaligned", "conv"};
      if (!aligned) return {"conv_unaligned", "conv"};
      return {"conv"};
    case KernelClass::kConv1x1:
      if (!aligned) return {"conv1x1_unaligned", "gemm_unaligned", "conv1x1", "gemm"};
      return {"conv1x1", "gemm"};
    case KernelClass::kGroupedConv:
      if (!aligned) return {"grouped_conv_unaligned", "grouped_conv", "conv"};
      return {"grouped_conv", "conv"};
    case KernelClass::kDepthwise:
      if (kernel.k > 0 && kernel.k <= 1) return {"pointwise"};
      return {"depthwise"};
    case KernelClass::kAttention: return {"attention", "gemm"};
    case KernelClass::kReduction: return {"reduction", "pointwise"};
    case KernelClass::kNorm: return {"norm", "pointwise"};
    case KernelClass::kPooling: return {"pooling", "pointwise"};
    case KernelClass::kLayoutCopy: return {"layout_copy", "pointwise"};
    case KernelClass::kGatherScatter: return {"gather_scatter", "pointwise"};
    case KernelClass::kPointwise:
    case KernelClass::kOther: return {"pointwise"};
    case KernelClass::kNone: return {};
  }
  return {};
}

// A grouped conv of few channels per group fills a library tile's channel width only partly: its
// math runs at the rate of a group padded to kGroupTileChannels (an estimate until a grouped_conv
// curve is calibrated; docs/roofline.md).
constexpr double kGroupTileChannels = 32;
double grouped_conv_padding(const KernelShape& kernel, const char* key) {
  if (kernel.cls != KernelClass::kGroupedConv || std::string(key) != "conv" || !(kernel.group_width > 0)) return 1;
  return std::max(1.0, std::ceil(kernel.group_width / kGroupTileChannels) * kGroupTileChannels / kernel.group_width);
}

// The curves were timed on fp16 tensor-core kernels (depthwise: fp16 on the vector units). Other
// dtypes run the same kernels at their own peak: the FLOP rate and the K loop scale by the ratio.
double dtype_rate_scale(const Device& device, KernelClass c, const PeakChoice& peak) {
  if (!kernel_class_is_matrix(c)) return 1;
  const bool vector_class = c == KernelClass::kDepthwise;
  const MathPath path = vector_class ? MathPath::kVector : MathPath::kTensor;
  const double reference = choose_peak(device, path, "fp16").flops_per_s;  // the fp16 the curve was timed at
  const double own = vector_class ? choose_peak(device, MathPath::kVector, peak.dtype).flops_per_s : peak.flops_per_s;
  return reference > 0 && own > 0 ? own / reference : 1;
}

}  // namespace

std::optional<KernelCurve> class_curve(const Device& device, const KernelShape& kernel, const PeakChoice& peak,
                                       double element_bytes) {
  const auto& curves = device.achievable.kernel_curves;
  for (const char* key : curve_keys(kernel, tile_aligned(kernel, element_bytes))) {
    auto it = curves.find(key);
    if (it == curves.end()) continue;
    KernelCurve curve = it->second;
    const double padding = grouped_conv_padding(kernel, key) * std::max(1.0, kernel.math_padding);
    const double scale = dtype_rate_scale(device, kernel.cls, peak) / padding;
    curve.tflops *= scale;
    curve.k_us_per_1000 /= scale;
    return curve;
  }
  return std::nullopt;
}

std::optional<PricedCurve> fastest_curve(const Device& device, const KernelShape& kernel, const PeakChoice& peak,
                                         const CurveWork& work) {
  const std::optional<KernelCurve> own = class_curve(device, kernel, peak, work.element_bytes);
  if (!own) return std::nullopt;
  PricedCurve best{*own, kernel.k, work.flops, work.bytes};
  const double g = kernel.groups;
  if (kernel.cls != KernelClass::kGroupedConv || !(g > 1) || g > kMaxBlockDiagonalGroups) return best;
  KernelShape dense = kernel;
  dense.cls = KernelClass::kConv;
  dense.groups = 1;
  dense.group_width = kernel.group_width * g;
  dense.k = kernel.k * g;
  if (const std::optional<KernelCurve> conv = class_curve(device, dense, peak, work.element_bytes)) {
    const PricedCurve block_diagonal{*conv, dense.k, work.flops * g, work.bytes + work.weight_bytes * (g - 1)};
    if (block_diagonal.us() < best.us()) best = block_diagonal;
  }
  return best;
}

}  // namespace modelcost
