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

// The terms a class's curve is fitted with: fixed cost and bandwidth (byte classes); the K loop and
// a FLOP throughput too (matrix classes); and the short-reduction slowdown (KernelCurve::k_half)
// where the class runs products of any depth (the 1x1 convs, a few channels deep or thousands);
// or a kernel whose blocks run in waves of dependent steps (decode_attention: K counts its waves,
// its FLOPs every slot of every wave, and the FLOP and byte terms add up: knee 1).
enum class CurveTerms { kBytes, kMatrix, kMatrixShortReduction, kWaves };
CurveTerms curve_terms(const std::string& kernel_class);
// Whether a class's curve has the K and FLOP terms (every kind but kBytes).
bool curve_has_work_terms(const std::string& kernel_class);

KernelCurve fit_kernel_curve(const std::vector<KernelSample>& samples, CurveTerms terms);

// Held-out errors: each sample predicted by the curve fitted to the others of `folds` folds (sample
// i in fold i mod folds), as relative errors. What a shape the grid never timed can expect.
std::vector<double> held_out_errors(const std::vector<KernelSample>& samples, CurveTerms terms, int folds = 5);

// The median of the absolute values (0 for none).
double median_abs(std::vector<double> errors);

// The relative errors (predicted / measured - 1) of a curve on samples.
std::vector<double> relative_errors(const KernelCurve& curve, const std::vector<KernelSample>& samples);

}  // namespace modelcost
