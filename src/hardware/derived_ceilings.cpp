// Achievable ceilings for a GPU nobody calibrated, carried over from one that was (docs/hwdb.md,
// "Derived entries"): each measured figure is kept as a fraction of the datasheet figure it stands
// under, and each kernel curve's terms are rescaled by the architectural figure that sets them.
#include <cctype>
#include <cmath>

#include "modelcost/hardware.h"
#include "modelcost/kernel_curve_fit.h"

namespace modelcost {

namespace {

double ratio(double target, double reference) { return reference > 0 && target > 0 ? target / reference : 1.0; }

// The first word of the architecture ("Hopper (GH100)" -> "hopper").
std::string family(const std::string& architecture) {
  std::string out;
  for (char c : architecture) {
    if (c == ' ' || c == '(') break;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool can_derive_into(const Device& d) {
  return d.kind == "gpu" && !d.uniform_peak_tflops && d.achievable.empty() &&
         d.peak_flops(MathPath::kTensor, "fp16") > 0 && d.memory_bandwidth_gbps > 0;
}

// A peak map's achievable counterpart: the reference's measured fraction of each dtype's peak.
std::map<std::string, double> scaled_peaks(const std::map<std::string, double>& measured,
                                           const std::map<std::string, double>& reference_peaks,
                                           const std::map<std::string, double>& target_peaks) {
  std::map<std::string, double> out;
  for (const auto& [dtype, value] : measured) {
    auto ref = reference_peaks.find(dtype);
    auto tgt = target_peaks.find(dtype);
    if (ref == reference_peaks.end() || tgt == target_peaks.end() || ref->second <= 0) continue;
    out[dtype] = value / ref->second * tgt->second;
  }
  return out;
}

bool at_least(const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
  for (const auto& [dtype, value] : b) {
    auto it = a.find(dtype);
    if (it == a.end() || it->second < value) return false;
  }
  return true;
}

// How a curve's byte term moves to another GPU: the reference's DRAM bandwidth, the ratio of the
// two DRAM bandwidths, and how much longer the SMs take for the same steps on the target.
struct BytePace {
  double reference_dram_gbps = 0, dram_ratio = 1, sm_time_ratio = 1;
};

// A class streaming at the reference's DRAM rate or faster (L2 reuse) moves with the DRAM. One
// slower spends, per byte, the DRAM's time plus steps the SMs pace (a block's chain of loads and
// reductions): the first part scales with the DRAM bandwidth, the rest with the SMs.
double derived_gbps(double gbps, const BytePace& p) {
  if (!(gbps > 0) || !(p.reference_dram_gbps > 0) || gbps >= p.reference_dram_gbps) return gbps * p.dram_ratio;
  const double dram_s_per_gb = 1 / p.reference_dram_gbps, sm_s_per_gb = 1 / gbps - dram_s_per_gb;
  return 1 / (dram_s_per_gb / p.dram_ratio + sm_s_per_gb * p.sm_time_ratio);
}

}  // namespace

bool is_calibrated(const Device& device) {
  if (device.achievable.kernel_curves.empty()) return false;
  auto it = device.sources.find("achievable.kernels.gemm");
  return it == device.sources.end() || !it->second.derived;
}

bool dominates(const Device& a, const Device& b) {
  return a.compute_units >= b.compute_units && a.boost_clock_mhz >= b.boost_clock_mhz &&
         a.memory_bandwidth_gbps >= b.memory_bandwidth_gbps && a.l2_mb >= b.l2_mb &&
         a.launch_overhead_us <= b.launch_overhead_us && at_least(a.tensor_tflops, b.tensor_tflops) &&
         at_least(a.vector_tflops, b.vector_tflops);
}

const Device* derivation_reference(const HardwareDb& db, const Device& target) {
  const Device* best = nullptr;
  double best_distance = 0;
  for (const Device& d : db.devices()) {
    if (&d == &target || d.kind != "gpu" || !is_calibrated(d)) continue;
    // A calibrated GPU at least as strong on every figure first (then every term of the target
    // scales down from it, and it is never predicted slower than the target), then the same vendor,
    // the same architecture family, the nearest tensor peak and bandwidth; the id breaks ties.
    double distance = std::abs(std::log(ratio(d.peak_flops(MathPath::kTensor, "fp16"),
                                              target.peak_flops(MathPath::kTensor, "fp16")))) +
                      std::abs(std::log(ratio(d.memory_bandwidth_gbps, target.memory_bandwidth_gbps)));
    distance = std::round(distance * 100) / 100;
    if (family(d.architecture) != family(target.architecture)) distance += 100;
    if (d.vendor != target.vendor) distance += 1000;
    if (!dominates(d, target)) distance += 10000;
    if (!best || distance < best_distance || (distance == best_distance && d.id < best->id)) {
      best = &d;
      best_distance = distance;
    }
  }
  return best;
}

AchievableCeilings derive_ceilings(const Device& target, const Device& reference) {
  const AchievableCeilings& m = reference.achievable;
  AchievableCeilings out;
  const double bandwidth = ratio(target.memory_bandwidth_gbps, reference.memory_bandwidth_gbps);
  const double tensor = ratio(target.peak_flops(MathPath::kTensor, "fp16"), reference.peak_flops(MathPath::kTensor, "fp16"));
  // A tile's serial K loop runs at the SM clock (so a GPU at least as fast on every datasheet figure
  // is never slower; per-SM rates are not datasheet figures).
  const double clock = ratio(reference.boost_clock_mhz, target.boost_clock_mhz);
  // The rate fp16 vector work gets on each (an entry without a vector fp16 figure runs it at fp32's).
  const double vector = ratio(choose_peak(target, MathPath::kVector, "fp16").flops_per_s,
                              choose_peak(reference, MathPath::kVector, "fp16").flops_per_s);
  const double slots = ratio(target.compute_units, reference.compute_units);
  out.memory_bandwidth_gbps = m.memory_bandwidth_gbps * bandwidth;
  out.vector_tflops = scaled_peaks(m.vector_tflops, reference.vector_tflops, target.vector_tflops);
  out.tensor_tflops = scaled_peaks(m.tensor_tflops, reference.tensor_tflops, target.tensor_tflops);
  // The launch path (driver, front end, graph replay) is the same software on every NVIDIA GPU.
  out.kernel_overhead_us = m.kernel_overhead_us;
  out.kernel_gap_us = m.kernel_gap_us;
  out.library_gap_us = m.library_gap_us;
  // Operands reaching a kernel from its neighbours rather than from its own last run: a property
  // of running a graph, carried over as is.
  out.in_graph_work_scale = m.in_graph_work_scale;
  // The SM clock under the power limit of tensor-core products: a GPU of the same generation and
  // power class behaves alike; carried over as is, as the other in-graph terms are.
  out.attention_load_scale = m.attention_load_scale;
  for (const auto& [name, c] : m.kernel_curves) {
    KernelCurve d = c;
    const bool vector_class = is_depthwise_curve(name);
    // A depthwise window loop runs on the vector units: its taps go at their rate.
    d.k_us_per_1000 = c.k_us_per_1000 * (vector_class ? 1 / vector : clock);
    // A wave class's FLOPs fill every slot of a wave (one per resident block of an SM), each a
    // chain of dependent steps at the SM clock: its rate goes with SMs x clock.
    const double rate = vector_class ? vector : curve_terms(name) == CurveTerms::kWaves ? slots / clock : tensor;
    d.tflops = c.tflops * rate;
    d.gbps = derived_gbps(c.gbps, {m.memory_bandwidth_gbps, bandwidth, name == "expert_routing" ? clock : clock / slots});
    out.kernel_curves[name] = d;
  }
  out.derived_from = reference.id;
  return out;
}

namespace {

// The target's [sources] for its derived figures: each names the reference's document for the
// same figure, marked derived with the ratio it was carried over by.
// The reference's source for `key` (or none), marked derived with `note`, on the target; the
// document it names comes along.
void carry_source(Device& target, const Device& reference, const std::string& key, const std::string& note) {
  FigureSource source;
  if (auto ref = reference.sources.find(key); ref != reference.sources.end()) source = ref->second;
  source.derived = true;
  source.note = note;
  if (auto doc = reference.documents.find(source.document); doc != reference.documents.end())
    target.documents[source.document] = doc->second;
  target.sources[key] = source;
}

void source_derived_figures(Device& target, const Device& reference) {
  for (const auto& [key, value] : device_figures(target)) {
    if (key.rfind("achievable.", 0) != 0) continue;
    auto ref = reference.sources.find(key);
    FigureSource source;
    source.document = ref != reference.sources.end() ? ref->second.document : "";
    source.derived = true;
    source.note = "carried over from " + reference.id + " (" + reference.name +
                  ") by the ratio of the datasheet figures that set it (docs/hwdb.md, Derived entries)";
    if (auto doc = reference.documents.find(source.document); doc != reference.documents.end())
      target.documents[source.document] = doc->second;
    target.sources[key] = source;
  }
  // Curves share one source per class, keyed like the other figures.
  for (const auto& [name, curve] : target.achievable.kernel_curves) {
    const std::string key = "achievable.kernels." + name;
    if (reference.sources.count(key) == 0) continue;
    carry_source(target, reference, key, "carried over from " + reference.id + "'s measured curve (docs/hwdb.md, Derived entries)");
  }
}

// A calibrated entry whose grid timed fewer kernel classes than another's (a calibration from
// before those classes were sampled): each class it lacks is carried over from the nearest
// calibrated entry that has it, sourced as derived, so no class falls back to another class's
// curve on one GPU while a neighbour prices it on its own.
void complete_calibrated_curves(HardwareDb& db) {
  std::vector<Device> completed;
  for (const Device& d : db.devices()) {
    if (d.kind != "gpu" || !is_calibrated(d)) continue;
    const Device* reference = derivation_reference(db, d);
    if (!reference) continue;
    Device copy = d;
    for (const auto& [name, curve] : derive_ceilings(d, *reference).kernel_curves) {
      if (!copy.achievable.kernel_curves.emplace(name, curve).second) continue;
      carry_source(copy, *reference, "achievable.kernels." + name,
                   "carried over from " + reference->id + "'s measured curve: this entry's calibration timed no " + name +
                       " kernels (docs/hwdb.md, Derived entries)");
    }
    if (copy.achievable.kernel_curves.size() > d.achievable.kernel_curves.size()) completed.push_back(std::move(copy));
  }
  for (Device& d : completed) db.add(std::move(d));
}

}  // namespace

void derive_missing_ceilings(HardwareDb& db) {
  complete_calibrated_curves(db);
  std::vector<Device> derived;
  for (const Device& d : db.devices()) {
    if (!can_derive_into(d)) continue;
    const Device* reference = derivation_reference(db, d);
    if (!reference) continue;
    Device copy = d;
    copy.achievable = derive_ceilings(d, *reference);
    source_derived_figures(copy, *reference);
    derived.push_back(std::move(copy));
  }
  for (Device& d : derived) db.add(std::move(d));  // replaces the entry of the same id
}

std::string calibration_state(const Device& device) {
  if (device.uniform_peak_tflops || device.achievable.empty()) return "datasheet";
  if (!device.achievable.derived_from.empty()) return "derived from " + device.achievable.derived_from;
  return is_calibrated(device) ? "calibrated" : "derived";
}

}  // namespace modelcost
