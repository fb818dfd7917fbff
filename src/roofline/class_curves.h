// Which calibrated curve prices a kernel of the plan, and how it carries over to the work's dtype
// (docs/roofline.md, "Calibrated kernels").
#pragma once
#include <optional>

#include "modelcost/hardware.h"
#include "modelcost/kernel_plan.h"

namespace modelcost {

// The device's curve for the kernel's class (or the class it is built like; an unaligned shape's
// own curve first), its FLOP rate and K loop scaled to the dtype's peak and, for a grouped conv on
// the dense conv curve, to its group padding; nullopt when the device has no curve for it.
std::optional<KernelCurve> class_curve(const Device& device, const KernelShape& kernel, const PeakChoice& peak,
                                       double element_bytes = 2);

// The curve a kernel is priced on, with the K, FLOPs and bytes it runs there.
struct PricedCurve {
  KernelCurve curve;
  double k = 0, flops = 0, bytes = 0;
  double us() const { return curve.us(k, flops, bytes); }
};

// What a kernel moves and computes, as the curves price it.
struct CurveWork {
  double flops = 0, bytes = 0;
  double weight_bytes = 0;   // a grouped conv's filters: block-diagonal filters repeat them
  double element_bytes = 2;  // of the compute dtype: decides alignment
};

// The faster way a runtime runs the kernel: its class curve, or for a grouped conv of at most
// kMaxBlockDiagonalGroups groups also the dense conv over block-diagonal filters (the math, the
// K loop and the filters times the group count); nullopt without a curve.
constexpr double kMaxBlockDiagonalGroups = 64;
std::optional<PricedCurve> fastest_curve(const Device& device, const KernelShape& kernel, const PeakChoice& peak,
                                         const CurveWork& work);

}  // namespace modelcost
