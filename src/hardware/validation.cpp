// Schema and sanity checks of one hardware entry (docs/hwdb.md, "Validation"). The test suite
// runs them on every shipped file; the loader does not, so a user's rough entry still loads.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "modelcost/hardware.h"

namespace modelcost {
namespace {

// Absolute upper bounds no device of this decade reaches; a figure above one is a typo or a unit error.
const std::map<std::string, double> kAbsoluteMax = {
    {"sm_count", 1024},       {"cu_count", 1024},      {"cores", 1024},
    {"boost_clock_mhz", 6000}, {"memory_gb", 16384},   {"memory_bandwidth_gbps", 20000},
    {"l2_mb", 1024},          {"l3_mb", 4096},         {"tdp_w", 2000},
    {"launch_overhead_us", 1000}, {"price_per_hour_usd", 1000},
};
constexpr double kMaxPeakTflops = 20000;

// Most FLOP (or integer op) per clock one SM/CU/core can retire, per path and dtype, with headroom
// over the densest unit known (Hopper/Blackwell SM, CDNA3 CU, Zen/Sapphire Rapids core). A dense
// figure above this for the unit count and clock given is a sparse figure or a wrong unit count.
double max_ops_per_unit_clock(MathPath path, const std::string& dtype) {
  if (path == MathPath::kVector) {
    if (dtype == "fp64") return 256;
    if (dtype == "fp32" || dtype == "tf32") return 264;  // 128 FMA lanes x 2, +3% clock rounding
    return 1056;                                          // packed 16/8-bit vector math
  }
  if (dtype == "fp64") return 528;
  if (dtype == "tf32") return 4224;
  if (dtype == "fp16" || dtype == "bf16") return 8448;
  if (dtype == "fp8" || dtype == "int8") return 16896;
  return 33792;  // int4
}

bool is_figure_key(const std::string& key, const Device& d) {
  for (const auto& [k, v] : device_figures(d))
    if (k == key) return true;
  return false;
}

// An achievable ceiling is at most its datasheet figure (and is only given where that exists).
template <typename Report>
void check_achievable(const Device& d, Report problem) {
  const AchievableCeilings& a = d.achievable;
  if (a.memory_bandwidth_gbps > d.memory_bandwidth_gbps * 1.01)
    problem(fmt::format("achievable.memory_bandwidth_gbps = {} is above the datasheet {}", a.memory_bandwidth_gbps,
                        d.memory_bandwidth_gbps));
  for (MathPath path : {MathPath::kVector, MathPath::kTensor})
    for (const auto& [dtype, tflops] : path == MathPath::kTensor ? a.tensor_tflops : a.vector_tflops) {
      const double sheet = d.peak_flops(path, dtype) / 1e12;
      if (!(sheet > 0)) problem(fmt::format("achievable.{}.{} has no datasheet peak.{}.{} beside it", math_path_name(path), dtype,
                                            math_path_name(path), dtype));
      else if (tflops > sheet * 1.01)
        problem(fmt::format("achievable.{}.{} = {} is above the datasheet {}", math_path_name(path), dtype, tflops, sheet));
    }
  if (a.kernel_overhead_us > 1000 || a.kernel_gap_us > 1000 || a.library_gap_us > 1000)
    problem("achievable kernel overhead and gaps must be under 1000 us");
  if (a.in_graph_work_scale != 0 && (a.in_graph_work_scale < 1 || a.in_graph_work_scale > 2))
    problem(fmt::format("achievable.in_graph_work_scale = {} is outside [1, 2]", a.in_graph_work_scale));
  if (a.attention_load_scale != 0 && (a.attention_load_scale < 1 || a.attention_load_scale > 2))
    problem(fmt::format("achievable.attention_load_scale = {} is outside [1, 2]", a.attention_load_scale));
  for (const auto& [name, curve] : a.kernel_curves) {
    // Small kernels run from L2, so a class's bandwidth may pass DRAM's, never L2's few times it.
    if (curve.gbps > 5 * d.memory_bandwidth_gbps)
      problem(fmt::format("achievable.kernels.{}.gbps = {} is above 5x the datasheet bandwidth", name, curve.gbps));
    if (curve.tflops > kMaxPeakTflops) problem(fmt::format("achievable.kernels.{}.tflops = {} is above {}", name, curve.tflops, kMaxPeakTflops));
    // A slow GPU's depthwise loop may take ms per 1000 taps (1 s would be an error of units).
    if (curve.fixed_us > 1000 || curve.k_us_per_1000 > 1e6 || curve.k_us_per_1000 < 0 || curve.tflops < 0)
      problem(fmt::format("achievable.kernels.{}: fixed_us must be in [0, 1000], k_us_per_1000 in [0, 1e6], tflops at least 0", name));
    if (!(curve.k_half >= 0 && curve.k_half <= 4096))
      problem(fmt::format("achievable.kernels.{}.k_half = {} is outside [0, 4096]", name, curve.k_half));
    // A p-norm needs p >= 1 (below, the combination would be faster than either term alone).
    if (curve.knee != 0 && !(curve.knee >= 1 && curve.knee <= 16))
      problem(fmt::format("achievable.kernels.{}.knee = {} is neither 0 (max) nor in [1, 16]", name, curve.knee));
  }
}

}  // namespace

std::vector<std::string> validate_device(const Device& d) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& what) { problems.push_back(d.id + ": " + what); };

  // Identity.
  if (d.id.empty()) problem("missing id");
  for (char c : d.id)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      problem("id must be lowercase letters, digits and '-' (got '" + d.id + "')");
  for (const auto& a : d.aliases)
    if (a.empty() || a == d.id) problem("alias '" + a + "' is empty or repeats the id");
  if (d.name.empty() || d.vendor.empty() || d.architecture.empty()) problem("name, vendor and architecture are required");
  if (d.kind != "gpu" && d.kind != "cpu") problem("kind must be gpu or cpu (got '" + d.kind + "')");
  if (d.compute_units <= 0) problem("sm_count, cu_count or cores is required");
  if (d.kind == "gpu" && d.compute_unit_name == "cores") problem("a gpu gives sm_count or cu_count, not cores");
  if (d.memory_gb <= 0) problem("memory_gb must be above 0");
  if (d.memory_bandwidth_gbps <= 0) problem("memory_bandwidth_gbps must be above 0");
  if (d.tdp_w <= 0) problem("tdp_w must be above 0");
  if (!(d.launch_overhead_us > 0)) problem("launch_overhead_us must be above 0: every real device pays a launch cost");
  if (!d.vector_tflops.count("fp32")) problem("peak.vector.fp32 is required (the fallback of every vector dtype)");

  // Every figure: positive, under its absolute bound, with a source document that has a title and a URL.
  for (const auto& [key, value] : device_figures(d)) {
    if (!(value > 0) && key != "launch_overhead_us") problem(fmt::format("{} must be above 0 (got {})", key, value));
    // (launch_overhead_us is checked above with its own message)
    if (auto it = kAbsoluteMax.find(key); it != kAbsoluteMax.end() && value > it->second)
      problem(fmt::format("{} = {} is above the sanity bound {}", key, value, it->second));
    if ((key.rfind("peak.", 0) == 0 || key.rfind("achievable.vector.", 0) == 0 || key.rfind("achievable.tensor.", 0) == 0) &&
        value > kMaxPeakTflops)
      problem(fmt::format("{} = {} TFLOP/s is above the sanity bound {}", key, value, kMaxPeakTflops));
    auto src = d.sources.find(key);
    if (src == d.sources.end()) {
      problem("figure '" + key + "' has no entry in [sources]");
      continue;
    }
    const FigureSource& s = src->second;
    auto doc = d.documents.find(s.document);
    if (doc == d.documents.end()) {
      problem("source of '" + key + "' names document '" + s.document + "', which [documents] lacks");
    } else if (doc->second.title.empty() ||
               (doc->second.url.rfind("http", 0) != 0 && doc->second.url.rfind("docs/", 0) != 0)) {
      problem("document '" + s.document + "' needs a title and an http(s) URL (or a docs/ page of this repository)");
    }
    if (s.derived && s.note.empty()) problem("derived figure '" + key + "' needs a note saying how it was derived");
    if (s.sparse_figure > 0) {
      if (!s.derived) problem("'" + key + "' was halved from a sparse figure, so it must be marked derived");
      if (std::fabs(value * 2 - s.sparse_figure) > 0.01 * s.sparse_figure)
        problem(fmt::format("'{}' = {} is not half of its with-sparsity figure {}", key, value, s.sparse_figure));
    }
  }
  for (const auto& [key, s] : d.sources)
    if (!is_figure_key(key, d)) problem("[sources] names '" + key + "', which is not a figure of this entry");

  check_achievable(d, problem);

  // Matrix units never run slower than the vector units on the same dtype.
  for (const auto& [dtype, tensor] : d.tensor_tflops) {
    const std::string vector_dtype = dtype == "tf32" ? "fp32" : dtype;
    if (auto v = d.vector_tflops.find(vector_dtype); v != d.vector_tflops.end() && tensor < v->second)
      problem(fmt::format("peak.tensor.{} = {} is below peak.vector.{} = {}", dtype, tensor, vector_dtype, v->second));
  }

  // Per-unit-per-clock rates: catches sparse figures passed as dense and wrong unit counts.
  if (d.compute_units > 0 && d.boost_clock_mhz > 0) {
    const double unit_clocks = d.compute_units * d.boost_clock_mhz * 1e6;
    for (MathPath path : {MathPath::kVector, MathPath::kTensor}) {
      const auto& peaks = path == MathPath::kTensor ? d.tensor_tflops : d.vector_tflops;
      for (const auto& [dtype, tflops] : peaks) {
        const double per_clock = tflops * 1e12 / unit_clocks;
        if (per_clock > max_ops_per_unit_clock(path, dtype))
          problem(fmt::format("peak.{}.{} = {} means {:.0f} ops per {} per clock, above the physical bound {:.0f}",
                              math_path_name(path), dtype, tflops, per_clock, d.compute_unit_name,
                              max_ops_per_unit_clock(path, dtype)));
      }
    }
  }
  return problems;
}

}  // namespace modelcost
