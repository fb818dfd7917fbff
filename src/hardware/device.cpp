// Peak lookups on one device, its figure list, and devices made from inline figures.
#include <fmt/format.h>

#include "modelcost/errors.h"
#include "modelcost/hardware.h"

namespace modelcost {

const char* math_path_name(MathPath path) { return path == MathPath::kTensor ? "tensor" : "vector"; }

const std::vector<std::string>& peak_dtype_names() {
  static const std::vector<std::string> names = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"};
  return names;
}

double Device::peak_flops(MathPath path, const std::string& dtype) const {
  if (uniform_peak_tflops) return *uniform_peak_tflops * 1e12;
  const auto& peaks = path == MathPath::kTensor ? tensor_tflops : vector_tflops;
  auto it = peaks.find(dtype);
  return it == peaks.end() ? 0 : it->second * 1e12;
}

double Device::achievable_flops(MathPath path, const std::string& dtype) const {
  const auto& peaks = path == MathPath::kTensor ? achievable.tensor_tflops : achievable.vector_tflops;
  auto it = peaks.find(dtype);
  return it == peaks.end() || uniform_peak_tflops ? 0 : it->second * 1e12;
}

namespace {

// Vector units have no tf32/fp8/int formats of their own: such work runs at a wider format's rate.
std::vector<std::string> vector_fallbacks(const std::string& dtype) {
  if (dtype == "fp64") return {"fp64", "fp32"};
  if (dtype == "fp32" || dtype == "tf32") return {"fp32"};
  if (dtype == "fp16") return {"fp16", "fp32"};
  if (dtype == "bf16") return {"bf16", "fp32"};
  return {dtype, "fp16", "fp32"};  // fp8, int8, int4
}

// A matrix format the device lacks is computed in the next wider one it has (fp8 on an A100 runs
// as fp16); with none, the node falls to the vector path.
std::vector<std::string> tensor_fallbacks(const std::string& dtype) {
  if (dtype == "fp8") return {"fp8", "fp16"};
  if (dtype == "int4") return {"int4", "int8", "fp16"};
  if (dtype == "int8") return {"int8", "fp16"};
  if (dtype == "bf16") return {"bf16", "fp16"};
  return {dtype};  // fp64, tf32, fp16: no wider matrix format is a faithful stand-in
}

}  // namespace

PeakChoice choose_peak(const Device& device, MathPath wanted_path, const std::string& dtype) {
  if (wanted_path == MathPath::kTensor) {
    for (const auto& d : tensor_fallbacks(dtype))
      if (double p = device.peak_flops(MathPath::kTensor, d); p > 0) return {MathPath::kTensor, d, p};
  }
  for (const auto& d : vector_fallbacks(dtype))
    if (double p = device.peak_flops(MathPath::kVector, d); p > 0) return {MathPath::kVector, d, p};
  return {MathPath::kVector, dtype, 0};
}

std::vector<std::pair<std::string, double>> device_figures(const Device& d) {
  std::vector<std::pair<std::string, double>> out;
  auto add = [&](const std::string& key, double v) {
    if (v > 0) out.emplace_back(key, v);
  };
  if (d.compute_units > 0) out.emplace_back(d.compute_unit_name.empty() ? "sm_count" : d.compute_unit_name, d.compute_units);
  add("boost_clock_mhz", d.boost_clock_mhz);
  add("memory_gb", d.memory_gb);
  add("memory_bandwidth_gbps", d.memory_bandwidth_gbps);
  add("l2_mb", d.l2_mb);
  add("l3_mb", d.l3_mb);
  add("tdp_w", d.tdp_w);
  // Launch overhead may legitimately be 0 (a custom device); it is listed whenever a file gave it.
  if (d.launch_overhead_us > 0 || d.sources.count("launch_overhead_us")) out.emplace_back("launch_overhead_us", d.launch_overhead_us);
  if (d.price_per_hour_usd) out.emplace_back("price_per_hour_usd", *d.price_per_hour_usd);
  for (const auto& dtype : peak_dtype_names()) {
    if (auto it = d.vector_tflops.find(dtype); it != d.vector_tflops.end()) out.emplace_back("peak.vector." + dtype, it->second);
  }
  for (const auto& dtype : peak_dtype_names()) {
    if (auto it = d.tensor_tflops.find(dtype); it != d.tensor_tflops.end()) out.emplace_back("peak.tensor." + dtype, it->second);
  }
  const AchievableCeilings& a = d.achievable;
  add("achievable.memory_bandwidth_gbps", a.memory_bandwidth_gbps);
  for (const auto& dtype : peak_dtype_names())
    if (auto it = a.vector_tflops.find(dtype); it != a.vector_tflops.end()) out.emplace_back("achievable.vector." + dtype, it->second);
  for (const auto& dtype : peak_dtype_names())
    if (auto it = a.tensor_tflops.find(dtype); it != a.tensor_tflops.end()) out.emplace_back("achievable.tensor." + dtype, it->second);
  add("achievable.kernel_overhead_us", a.kernel_overhead_us);
  add("achievable.kernel_gap_us", a.kernel_gap_us);
  add("achievable.library_gap_us", a.library_gap_us);
  add("achievable.in_graph_work_scale", a.in_graph_work_scale);
  add("achievable.attention_load_scale", a.attention_load_scale);
  // A class's curve is one figure (its fixed cost stands for it); its other terms share its source.
  for (const auto& name : kernel_class_names())
    if (auto it = a.kernel_curves.find(name); it != a.kernel_curves.end()) out.emplace_back("achievable.kernels." + name, it->second.fixed_us);
  for (const auto& [key, value] : d.interconnect) out.emplace_back("interconnect." + key, value);
  // The curves are one figure (the most GPUs' largest size's time stands for them).
  if (!d.allreduce_curves.empty())
    out.emplace_back("interconnect.allreduce_curve", d.allreduce_curves.by_ranks.back().bytes_us.back().second);
  return out;
}

Device make_custom_device(double peak_tflops, double bandwidth_gbps, double memory_gb, double launch_overhead_us) {
  if (!(peak_tflops > 0) || !(bandwidth_gbps > 0))
    throw Error(kExitUsage, fmt::format("a custom device needs --peak-tflops and --bandwidth-gbps above 0 (got {} and {})",
                                        peak_tflops, bandwidth_gbps));
  if (memory_gb < 0 || launch_overhead_us < 0)
    throw Error(kExitUsage, "a custom device's memory and launch overhead cannot be negative");
  Device d;
  d.id = "custom";
  d.name = fmt::format("custom ({:g} TFLOP/s, {:g} GB/s)", peak_tflops, bandwidth_gbps);
  d.vendor = "user";
  d.architecture = "custom";
  d.kind = "gpu";
  d.memory_gb = memory_gb;
  d.memory_bandwidth_gbps = bandwidth_gbps;
  d.launch_overhead_us = launch_overhead_us;
  d.uniform_peak_tflops = peak_tflops;
  d.vector_tflops["fp32"] = peak_tflops;
  d.origin = "inline";
  return d;
}

Device with_overrides(const Device& base, std::optional<double> peak_tflops, std::optional<double> bandwidth_gbps) {
  Device d = base;
  if (bandwidth_gbps) {
    if (!(*bandwidth_gbps > 0)) throw Error(kExitUsage, "--bandwidth-gbps must be above 0");
    d.memory_bandwidth_gbps = *bandwidth_gbps;
  }
  if (peak_tflops) {
    if (!(*peak_tflops > 0)) throw Error(kExitUsage, "--peak-tflops must be above 0");
    d.uniform_peak_tflops = *peak_tflops;
  }
  if (peak_tflops || bandwidth_gbps) {
    d.name += " (user figures)";
    d.origin += " + inline overrides";
  }
  return d;
}

}  // namespace modelcost
