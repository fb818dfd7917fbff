// Which calibrated curve prices a kernel of the plan, and how it carries over to the work's dtype
// (docs/roofline.md, "Calibrated kernels").
#pragma once
#include <optional>

#include "modelcost/hardware.h"
#include "modelcost/kernel_plan.h"

namespace modelcost {

// The device's curve for the kernel's class (or the class it is built like), its FLOP rate and K
// loop scaled to the dtype's peak and, for a grouped conv on the dense conv curve, to its group
// padding; nullopt when the device has no curve for it.
std::optional<KernelCurve> class_curve(const Device& device, const KernelShape& kernel, const PeakChoice& peak);

}  // namespace modelcost
