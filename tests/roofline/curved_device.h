// A GPU whose kernel classes carry calibrated curves (docs/roofline.md, "Calibrated kernels"),
// shared by the roofline and kernel-class tests: gemm 4 us + 1 us per 1000 of K at 50 TFLOP/s
// and 1000 GB/s, attention 5 us + 20 us per 1000 at 20 TFLOP/s and 500 GB/s, pointwise 3 us at
// 2000 GB/s; no gap between kernels unless a test sets one.
#pragma once
#include "modelcost/hardware.h"

namespace modelcost::testing {

inline KernelCurve curve(double fixed_us, double k_us_per_1000, double tflops, double gbps) {
  KernelCurve c;
  c.fixed_us = fixed_us;
  c.k_us_per_1000 = k_us_per_1000;
  c.tflops = tflops;
  c.gbps = gbps;
  return c;
}

inline Device curved_device() {
  Device d = make_custom_device(100, 1000, 0, 1);
  d.uniform_peak_tflops.reset();
  d.kind = "gpu";
  d.compute_units = 100;
  d.tensor_tflops["fp16"] = 100;
  d.vector_tflops["fp16"] = 10;
  d.vector_tflops["fp32"] = 10;
  d.achievable.memory_bandwidth_gbps = 800;
  d.achievable.kernel_curves["gemm"] = curve(4, 1, 50, 1000);
  d.achievable.kernel_curves["attention"] = curve(5, 20, 20, 500);
  d.achievable.kernel_curves["pointwise"] = curve(3, 0, 0, 2000);
  return d;
}

}  // namespace modelcost::testing
