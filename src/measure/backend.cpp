// Entry points of the measure stage: picks the backend and walks the analysed nodes.
#include <fmt/format.h>

#include <unordered_map>
#include <cmath>
#include <algorithm>
#include <sstream>

#include "measure/cpu_backend.h"
#include "measure/node_spec.h"
#include "measure/cuda_entry.h"
#include "modelcost/errors.h"
#include "modelcost/kernel_curve_fit.h"
#include "modelcost/measure.h"

namespace modelcost {

bool cuda_support_compiled() { return !find_cuda_module().empty(); }

std::unique_ptr<Backend> make_backend(bool cpu, int device) {
  if (cpu) return make_cpu_backend();
  return cuda_module().make_backend(device);
}

std::vector<NodeMeasurement> measure_nodes(const Analysis& analysis, Backend& backend, const MeasureOptions& options) {
  std::vector<NodeMeasurement> results;
  results.reserve(analysis.nodes.size());
  std::unordered_map<std::string, size_t> first_of;  // measurement key -> index of the node measured
  backend.prepare_nodes(analysis, options);
  size_t done = 0;
  for (const NodeAnalysis& node : analysis.nodes) {
    std::string key;
    if (node.shaped) {
      try {
        key = measurement_key(make_node_spec(node, options.dtype));
      } catch (const Error&) {
        key.clear();  // a bad --dtype: measure_node reports it
      }
    }
    auto it = key.empty() ? first_of.end() : first_of.find(key);
    if (it != first_of.end()) {
      NodeMeasurement reused = results[it->second];
      reused.same_as = analysis.nodes[it->second].node->name;
      results.push_back(reused);
    } else {
      if (!key.empty()) first_of.emplace(key, results.size());
      results.push_back(backend.measure_node(node, options));
    }
    ++done;
    if (options.progress) options.progress(done, analysis.nodes.size(), node.node->name);
  }
  return results;
}

ModelMeasurement measure_model(const Analysis& analysis, Backend& backend, const MeasureOptions& options,
                               const std::vector<NodeMeasurement>& nodes) {
  ModelMeasurement m = backend.measure_model(analysis, options);
  for (const auto& n : nodes)
    if (n.measured) m.sum_of_node_medians_us += n.median_us;
  return m;
}

namespace {

// The grid's calls of one curve. A grouped conv that ran fastest as a dense conv over
// block-diagonal filters is left out: the roofline prices that tactic on the dense curve beside
// the grouped one, as the runtime times both.
std::vector<KernelSample> curve_samples(const std::vector<LibraryKernelSample>& grid, const std::string& name) {
  const bool matrix = curve_has_work_terms(name);
  const bool grouped = name.rfind("grouped_conv", 0) == 0;
  std::vector<KernelSample> samples;
  for (const auto& k : grid)
    if (k.kind == name && !(grouped && k.implementation.rfind("block-diagonal", 0) == 0))
      samples.push_back({matrix ? k.k : 0, k.flops, k.bytes, k.model_us()});
  return samples;
}

}  // namespace

std::map<std::string, KernelCurve> fit_library_curves(const std::vector<LibraryKernelSample>& grid) {
  std::map<std::string, KernelCurve> curves;
  for (const auto& name : kernel_class_names()) {
    const std::vector<KernelSample> samples = curve_samples(grid, name);
    if (!samples.empty()) curves[name] = fit_kernel_curve(samples, curve_terms(name));
  }
  return curves;
}

double median_library_gap_us(const std::vector<LibraryKernelSample>& grid) {
  std::vector<double> gaps;
  for (const auto& k : grid)
    if (k.graph_us > 0 && k.kernel_us > 0 && k.graph_us != k.kernel_us) gaps.push_back(std::max(0.0, k.graph_us - k.kernel_us));
  if (gaps.empty()) return 0;
  std::sort(gaps.begin(), gaps.end());
  return gaps[gaps.size() / 2];
}

std::vector<LibraryKernelSample> parse_library_kernels_csv(const std::string& text, const std::string& origin) {
  std::vector<LibraryKernelSample> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    // fresh_us, the tenth field, is optional (grids written before it was measured).
    if (f.size() != 9 && f.size() != 10) throw Error(kExitUsage, fmt::format("{}: expected 9 or 10 fields in '{}'", origin, line));
    LibraryKernelSample k;
    k.kind = f[0];
    k.shape = f[1];
    k.implementation = f[2];
    try {
      k.flops = std::stod(f[3]);
      k.bytes = std::stod(f[4]);
      k.k = std::stod(f[5]);
      k.kernels = std::stoi(f[6]);
      k.kernel_us = std::stod(f[7]);
      k.graph_us = std::stod(f[8]);
      if (f.size() == 10) k.fresh_us = std::stod(f[9]);
    } catch (const std::exception&) {
      throw Error(kExitUsage, fmt::format("{}: a number field of '{}' is not a number", origin, line));
    }
    out.push_back(k);
  }
  return out;
}

std::string library_kernels_csv(const CalibrationResult& r) {
  std::string out = "kind,shape,implementation,flops,bytes,k,kernels,kernel_us,graph_us,fresh_us\n";
  for (const auto& k : r.library_kernels) {
    std::string impl = k.implementation;
    for (char& ch : impl)
      if (ch == ',' || ch == '"') ch = ';';
    out += fmt::format("{},{},{},{:.0f},{:.0f},{:.0f},{},{:.3f},{:.3f},{:.3f}\n", k.kind, k.shape, impl, k.flops, k.bytes,
                       k.k, k.kernels, k.kernel_us, k.graph_us, k.fresh_us);
  }
  return out;
}

namespace {

// [achievable.kernels] of an entry: one curve per class.
std::string kernel_curves_toml(const CalibrationResult& r, std::vector<std::string>& figures) {
  if (r.library_curves.empty()) return "";
  std::string out = "\n[achievable.kernels]  # library kernels in a CUDA graph: fixed_us + k_us_per_1000 * K / 1000 + max(flops / tflops, bytes / gbps), their p-norm where knee = p\n";
  for (const auto& [name, c] : r.library_curves) {
    out += fmt::format("{} = {{ fixed_us = {:.3g}, ", name, c.fixed_us);
    if (curve_has_work_terms(name)) out += fmt::format("k_us_per_1000 = {:.3g}, tflops = {:.4g}, ", c.k_us_per_1000, c.tflops);
    if (c.knee > 0) out += fmt::format("knee = {:g}, ", c.knee);
    if (c.k_half > 0) out += fmt::format("k_half = {:g}, ", c.k_half);
    out += fmt::format("gbps = {:.4g} }}\n", c.gbps);
    figures.push_back("achievable.kernels." + name);
  }
  return out;
}

}  // namespace

// Written in the hwdb schema (docs/hwdb.md) so `--hwdb DIR` loads it; every figure's source is
// this calibration run.
std::string calibration_to_hwdb_toml(const CalibrationResult& r, const std::string& id) {
  const DeviceInfo& d = r.device;
  std::string out;
  out += fmt::format("# Measured by `modelcost calibrate` on {} ({}).\n", d.name, d.driver);
  out += fmt::format("id = \"{}\"\n", id);
  out += fmt::format("name = \"{} (calibrated)\"\n", d.name);
  out += fmt::format("vendor = \"{}\"\n", d.is_gpu ? "NVIDIA" : "CPU");
  out += fmt::format("architecture = \"{}\"\n",
                     d.is_gpu ? fmt::format("compute capability {}.{}", d.compute_capability_major, d.compute_capability_minor)
                              : std::string("x86-64"));
  out += fmt::format("kind = \"{}\"\n", d.is_gpu ? "gpu" : "cpu");
  std::vector<std::string> figures;
  if (d.multiprocessors > 0) {
    out += fmt::format("{} = {}\n", d.is_gpu ? "sm_count" : "cores", d.multiprocessors);
    figures.push_back(d.is_gpu ? "sm_count" : "cores");
  }
  if (d.sm_clock_mhz > 0) { out += fmt::format("boost_clock_mhz = {:.0f}\n", d.sm_clock_mhz); figures.push_back("boost_clock_mhz"); }
  if (d.memory_bytes > 0) { out += fmt::format("memory_gb = {:.1f}\n", d.memory_bytes / 1e9); figures.push_back("memory_gb"); }
  out += fmt::format("memory_bandwidth_gbps = {:.1f}\n", r.dram_gbps);
  figures.push_back("memory_bandwidth_gbps");
  if (d.l2_bytes > 0) { out += fmt::format("l2_mb = {:.1f}\n", d.l2_bytes / 1e6); figures.push_back("l2_mb"); }
  out += fmt::format("launch_overhead_us = {:.2f}\n", r.kernel_overhead_us > 0 ? r.kernel_overhead_us : d.is_gpu ? 3.0 : 1.0);
  out += "\n[peak.vector]  # TFLOP/s, achieved\n";
  if (r.fp32_vector_tflops > 0) { out += fmt::format("fp32 = {:.2f}\n", r.fp32_vector_tflops); figures.push_back("peak.vector.fp32"); }
  if (r.fp16_vector_tflops > 0) { out += fmt::format("fp16 = {:.2f}\n", r.fp16_vector_tflops); figures.push_back("peak.vector.fp16"); }
  out += "\n[peak.tensor]  # TFLOP/s, achieved with large GEMMs\n";
  for (const auto& [dtype, tflops] : r.tensor_tflops) {
    if (dtype == "fp32") continue;  // an fp32 GEMM runs on the vector units: not a tensor peak
    out += fmt::format("{} = {:.1f}\n", dtype, tflops);
    figures.push_back("peak.tensor." + dtype);
  }
  // The same figures as achievable ceilings, so a prediction with this entry uses them by default.
  out += "\n[achievable]\n";
  out += fmt::format("memory_bandwidth_gbps = {:.1f}\n", r.dram_gbps);
  figures.push_back("achievable.memory_bandwidth_gbps");
  if (r.kernel_overhead_us > 0) { out += fmt::format("kernel_overhead_us = {:.2f}\n", r.kernel_overhead_us); figures.push_back("achievable.kernel_overhead_us"); }
  if (r.kernel_gap_us > 0) { out += fmt::format("kernel_gap_us = {:.2f}\n", r.kernel_gap_us); figures.push_back("achievable.kernel_gap_us"); }
  if (r.library_gap_us > 0) { out += fmt::format("library_gap_us = {:.2f}\n", r.library_gap_us); figures.push_back("achievable.library_gap_us"); }
  if (r.attention_load_scale > 0) {
    out += fmt::format("attention_load_scale = {:.2f}\n", r.attention_load_scale);
    figures.push_back("achievable.attention_load_scale");
  }
  out += kernel_curves_toml(r, figures);
  if (r.allreduce_ranks > 1) {
    out += fmt::format("\n[interconnect]  # NCCL all-reduce over {} GPUs\n", r.allreduce_ranks);
    out += fmt::format("allreduce_bus_gbps = {:.1f}\nallreduce_latency_us = {:.2f}\n", r.allreduce_bus_gbps, r.allreduce_latency_us);
    figures.push_back("interconnect.allreduce_bus_gbps");
    figures.push_back("interconnect.allreduce_latency_us");
    if (!r.allreduce_curve.empty()) {
      std::vector<std::string> bytes, us;
      for (const auto& [b, t] : r.allreduce_curve.bytes_us) {
        bytes.push_back(fmt::format("{:.0f}", b));
        us.push_back(fmt::format("{:.2f}", t));
      }
      out += fmt::format("allreduce_curve = {{ ranks = {}, bytes = [{}], us = [{}] }}\n", r.allreduce_curve.ranks,
                         fmt::join(bytes, ", "), fmt::join(us, ", "));
      figures.push_back("interconnect.allreduce_curve");
    }
  }
  out += "\n[documents]\n";
  std::string how = fmt::format("{}", fmt::join(r.notes, "; "));
  for (char& ch : how)
    if (ch == '"' || ch == '\\' || ch == '\n') ch = '\'';
  out += fmt::format("calibration = {{ title = \"modelcost calibrate on {}: {}\", url = \"\" }}\n", d.name, how);
  out += "\n[sources]\n";
  for (const auto& f : figures) out += fmt::format("\"{}\" = \"calibration\"\n", f);
  if (r.kernel_overhead_us > 0) out += "launch_overhead_us = \"calibration\"\n";
  else out += "launch_overhead_us = { doc = \"calibration\", derived = true, note = \"not measured by calibrate; the hwdb default\" }\n";
  return out;
}

namespace {

// "5.62 us + 14.6 us per 1000 K + max(FLOPs / 168 TF, bytes / 1864 GB/s)", leaving out the terms a
// curve does not have (a memory-only kernel has no FLOP rate, a pointwise one no K term).
std::string curve_text(const KernelCurve& c, CurveTerms terms) {
  std::string text = fmt::format("{:.3g} us", c.fixed_us);
  // A wave class's K is 1000 per wave (fusion/flash_decoding_plan.h).
  if (c.k_us_per_1000 > 0) text += fmt::format(terms == CurveTerms::kWaves ? " + {:.3g} us per wave" : " + {:.3g} us per 1000 K", c.k_us_per_1000);
  std::vector<std::string> rates;
  if (c.tflops > 0) rates.push_back(fmt::format("FLOPs / {:.4g} TF", c.tflops));
  if (c.gbps > 0) rates.push_back(fmt::format("bytes / {:.4g} GB/s", c.gbps));
  if (rates.size() == 2 && c.knee == 1)
    text += " + " + rates[0] + " + " + rates[1];
  else if (rates.size() == 2 && c.knee > 0)
    text += fmt::format(" + (({})^{:g} + ({})^{:g})^(1/{:g})", rates[0], c.knee, rates[1], c.knee, c.knee);
  else if (rates.size() == 2)
    text += " + max(" + rates[0] + ", " + rates[1] + ")";
  if (rates.size() == 1) text += " + " + rates[0];
  if (c.k_half > 0) text += fmt::format(", traffic x (1 + {:g} / K)", c.k_half);
  return text;
}

std::string curves_table(const CalibrationResult& r) {
  if (r.library_curves.empty()) return "";
  // "fit": median error of the curve on the calls it was fitted to; "held out": of each call
  // predicted by the curve fitted to the others (5 folds), what an untimed shape can expect.
  std::string out = fmt::format("\n{:<26}{:>7}{:>6}{:>10}  {}\n", "kernel class", "calls", "fit", "held out",
                                "time per call (median errors)");
  for (const auto& [name, c] : r.library_curves) {
    const std::vector<KernelSample> samples = curve_samples(r.library_kernels, name);
    const double fit = median_abs(relative_errors(c, samples));
    const std::vector<double> held_out = held_out_errors(samples, curve_terms(name));
    // Fewer calls than folds: nothing to hold out.
    const std::string held = held_out.empty() ? "-" : fmt::format("{:.0f}%", 100 * median_abs(held_out));
    out += fmt::format("{:<26}{:>7}{:>5.0f}%{:>10}  {}\n", name, samples.size(), 100 * fit, held, curve_text(c, curve_terms(name)));
  }
  return out;
}

// Every all-reduce size timed beside the two-point line through 1 KiB and 256 MiB.
std::string allreduce_table(const CalibrationResult& r) {
  if (r.allreduce_curve.empty()) return "";
  const double n = static_cast<double>(r.allreduce_curve.ranks);
  std::string out = fmt::format("all-reduce over {} GPUs: bytes, measured us, two-point line us\n", r.allreduce_curve.ranks);
  for (const auto& [bytes, us] : r.allreduce_curve.bytes_us) {
    const double line = 2 * (n - 1) * r.allreduce_latency_us + 2 * (n - 1) / n * bytes / (r.allreduce_bus_gbps * 1e3);
    out += fmt::format("  {:>12.0f} {:>10.2f} {:>10.2f}\n", bytes, us, line);
  }
  return out;
}

}  // namespace

std::string format_calibration(const CalibrationResult& r, const std::map<std::string, double>& datasheet) {
  std::string out = r.device.driver.empty() ? r.device.name + "\n" : fmt::format("{} ({})\n", r.device.name, r.device.driver);
  std::string figures;
  auto row = [&](const std::string& label, const std::string& key, double value, const char* unit) {
    if (value <= 0) return;
    auto it = datasheet.find(key);
    if (it != datasheet.end() && it->second > 0)
      figures += fmt::format("{:<28}{:>10.4g} {:<4}{:>10.4g} {:<4}{:>8.0f}%\n", label, value, unit, it->second, unit,
                             100 * value / it->second);
    else
      figures += fmt::format("{:<28}{:>10.4g} {:<4}{:>15}{:>9}\n", label, value, unit, "-", "-");
  };
  row("DRAM bandwidth", "dram_gbps", r.dram_gbps, "GB/s");
  row("vector fp32", "fp32_vector", r.fp32_vector_tflops, "TF");
  row("vector fp16", "fp16_vector", r.fp16_vector_tflops, "TF");
  for (const auto& [dtype, tflops] : r.tensor_tflops) row("tensor " + dtype + " (GEMM)", dtype, tflops, "TF");
  row("empty kernel in a graph", "graph_kernel_us", r.graph_kernel_us, "us");
  row("small kernel in a graph", "small_kernel_us", r.small_kernel_us, "us");
  row("kernel overhead", "kernel_overhead_us", r.kernel_overhead_us, "us");
  row("inter-kernel gap", "kernel_gap_us", r.kernel_gap_us, "us");
  row("library call gap in a graph", "library_gap_us", r.library_gap_us, "us");
  row("attention under load", "attention_load_scale", r.attention_load_scale, "x");
  row("all-reduce bus bandwidth", "allreduce_bus_gbps", r.allreduce_bus_gbps, "GB/s");
  row("all-reduce step latency", "allreduce_latency_us", r.allreduce_latency_us, "us");
  // The header only over rows of figures (a refitted grid has none).
  if (!figures.empty()) out += fmt::format("{:<28}{:>15}{:>15}{:>9}\n", "figure", "measured", "datasheet", "ratio") + figures;
  out += curves_table(r);
  out += allreduce_table(r);
  for (const auto& note : r.notes) out += "  " + note + "\n";
  return out;
}

}  // namespace modelcost
