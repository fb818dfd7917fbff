// Fitting a kernel curve (hardware.h) to measured library kernels of one class: calibrate's grid
// gives the samples, generic shapes only, never a model's kernels. The fit minimises the squared
// relative error over the samples: a grid search over the throughput terms, and for each, the
// least-squares fixed cost and K-loop cost (both at least 0).
#pragma once
#include <vector>

#include "modelcost/hardware.h"

namespace modelcost {

struct KernelSample {
  double k = 0;          // reduction length (0 for byte classes)
  double flops = 0, bytes = 0;
  double us = 0;         // time per call in a CUDA graph
};

// `matrix`: fit the K loop and a FLOP throughput; otherwise fixed cost and bandwidth only.
KernelCurve fit_kernel_curve(const std::vector<KernelSample>& samples, bool matrix);

// The relative errors (predicted / measured - 1) of a curve on samples.
std::vector<double> relative_errors(const KernelCurve& curve, const std::vector<KernelSample>& samples);

}  // namespace modelcost
