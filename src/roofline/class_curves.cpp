// The curve of each kernel class (class_curves.h).
#include "class_curves.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace modelcost {

namespace {

// The curves that may price a kernel, in order: the one its shape names (kernel_curve_name: an
// unaligned or dilated shape's own, a one-tap depthwise window's pointwise stream), then, where the
// entry lacks that one, its class's, else the curve of the library kernel it is built like
// (docs/roofline.md, "Kernel classes").
std::vector<std::string> curve_keys(const KernelShape& kernel, double element_bytes) {
  if (kernel.cls == KernelClass::kNone) return {};
  const bool aligned = tile_aligned(kernel, element_bytes);
  std::vector<std::string> fallbacks;
  switch (kernel.cls) {
    case KernelClass::kGemm: fallbacks = {"gemm"}; break;
    case KernelClass::kConv:
      fallbacks = aligned ? std::vector<std::string>{"conv"} : std::vector<std::string>{"conv_unaligned", "conv"};
      break;
    case KernelClass::kConv1x1:
      fallbacks = aligned ? std::vector<std::string>{"gemm"} : std::vector<std::string>{"gemm_unaligned", "conv1x1", "gemm"};
      break;
    case KernelClass::kGroupedConv: fallbacks = {"grouped_conv", "conv"}; break;
    case KernelClass::kAttention: fallbacks = {"gemm"}; break;
    case KernelClass::kReduction:
    case KernelClass::kNorm:
    case KernelClass::kPooling:
    case KernelClass::kLayoutCopy:
    case KernelClass::kGatherScatter:
    case KernelClass::kOther: fallbacks = {"pointwise"}; break;
    case KernelClass::kDepthwise: fallbacks = {"depthwise"}; break;
    case KernelClass::kPointwise:
    case KernelClass::kNone: break;
  }
  std::vector<std::string> keys{kernel_curve_name(kernel, element_bytes)};
  for (const std::string& key : fallbacks)
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}

// A grouped conv of few channels per group fills a library tile's channel width only partly: its
// math runs at the rate of a group padded to kGroupTileChannels (an estimate until a grouped_conv
// curve is calibrated; docs/roofline.md).
constexpr double kGroupTileChannels = 32;
double grouped_conv_padding(const KernelShape& kernel, const std::string& key) {
  if (kernel.cls != KernelClass::kGroupedConv || key != "conv" || !(kernel.group_width > 0)) return 1;
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
  for (const std::string& key : curve_keys(kernel, element_bytes)) {
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
