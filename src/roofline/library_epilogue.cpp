#include "library_epilogue.h"

namespace modelcost {

double gelu_epilogue_us(const FusedGroup& group, const Device& device, double element_bytes, bool achievable) {
  if (device.kind != "gpu" || !group.tail_where_unaligned || runs_library_tail(group, element_bytes)) return 0;
  if (!(group.kernel.k > 0) || !(group.macs > 0)) return 0;
  const double outputs = group.macs / group.kernel.k;
  double flops_per_s = achievable ? device.achievable_flops(MathPath::kVector, "fp32") : 0;
  if (!(flops_per_s > 0)) flops_per_s = device.peak_flops(MathPath::kVector, "fp32");
  return flops_per_s > 0 ? outputs * kGeluEpilogueFlopsPerOutput / flops_per_s * 1e6 : 0;
}

}  // namespace modelcost
