// The hardware database: one TOML file per device under hwdb/ (schema in docs/hwdb.md), loaded,
// validated and resolved by id or alias. Every later stage (roofline, plan, measure) reads a Device.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace modelcost {

// The two math paths a GPU offers: general-purpose vector/SIMT units and matrix units
// (NVIDIA Tensor Cores, AMD Matrix Cores, Intel AMX).
enum class MathPath { kVector, kTensor };
const char* math_path_name(MathPath path);  // "vector" | "tensor"

// Dtype names used by peaks and by --dtype: fp64 fp32 tf32 fp16 bf16 fp8 int8 int4.
const std::vector<std::string>& peak_dtype_names();

// Where one figure comes from: a document and whether the figure was derived rather than read
// off it (halved with-sparsity figure, ratio of another figure, estimate).
struct FigureSource {
  std::string document;  // key into Device::documents
  bool derived = false;
  double sparse_figure = 0;  // the vendor's with-sparsity figure this dense one was halved from
  std::string note;
};

struct SourceDocument {
  std::string title;
  std::string url;
};

// How long a library kernel of one shape class takes in a CUDA graph, fitted to calibrate's grid
// of cuBLASLt GEMMs and cuDNN convolutions (docs/roofline.md, "Calibrated kernels"):
//   fixed_us + k_us_per_1000 * K / 1000 + max(flops / tflops, bytes / gbps)
// the fixed cost of any call (launch, prologue, epilogue, the idle time after it), the serial
// reduction loop over K (the GEMM's inner dimension; a conv's input channels x kernel taps; the
// key length of flash attention), and
// the throughput the class reaches at scale.
struct KernelCurve {
  double fixed_us = 0;
  double k_us_per_1000 = 0;  // matrix classes only
  double tflops = 0;         // matrix classes only; 0: no FLOP term
  double gbps = 0;
  // How the math and traffic terms combine: their p-norm (c^p + m^p)^(1/p), p = knee, so a kernel
  // near the ridge point takes longer than either term alone; 0: max(c, m), the sharp roofline.
  double knee = 0;
  // A product of short reduction depth K streams its operands in short bursts (each output tile
  // loads and stores with little math to overlap them): its traffic runs at gbps x K / (K + k_half).
  // 0: no such slowdown. Only the K-loop classes (conv1x1) have it fitted.
  double k_half = 0;
  bool empty() const { return fixed_us <= 0 && tflops <= 0 && gbps <= 0; }
  double latency_us(double k) const { return fixed_us + k_us_per_1000 * k / 1000; }
  double compute_us(double flops) const { return tflops > 0 ? flops / (tflops * 1e12) * 1e6 : 0; }
  double memory_us(double bytes) const { return gbps > 0 ? bytes / (gbps * 1e9) * 1e6 : 0; }
  // The traffic of a product of reduction depth k (k <= 0: unknown, no slowdown).
  double memory_us(double bytes, double k) const { return memory_us(bytes) * (k_half > 0 && k > 0 ? 1 + k_half / k : 1); }
  double throughput_us(double compute, double memory) const {
    if (knee <= 0 || compute <= 0 || memory <= 0) return std::max(compute, memory);
    return std::pow(std::pow(compute, knee) + std::pow(memory, knee), 1 / knee);
  }
  double us(double k, double flops, double bytes) const {
    return latency_us(k) + throughput_us(compute_us(flops), memory_us(bytes, k));
  }
};

// The kernel classes of a curve table: matrix classes measure work in FLOPs, the others in bytes.
const std::vector<std::string>& kernel_class_names();  // gemm conv1x1 conv grouped_conv ... pooling decode_*
bool kernel_class_is_matrix(const std::string& name);  // gemm, the convs and attention: a K loop and a FLOP term
bool is_depthwise_curve(const std::string& name);     // depthwise, depthwise_swish, depthwise_dilated: windows on the vector units

// What kernels really reach on the device, beside the datasheet peaks: measured by `calibrate` on
// the GPU itself, or derived from the measured fraction of the same architecture (each figure's
// source says which). 0 or absent: not given, the datasheet figure applies.
struct AchievableCeilings {
  double memory_bandwidth_gbps = 0;
  std::map<std::string, double> vector_tflops;
  std::map<std::string, double> tensor_tflops;
  double kernel_overhead_us = 0;  // least time of one kernel in a CUDA graph (launch and ramp)
  double kernel_gap_us = 0;       // idle time between two dependent kernels
  // What a kernel priced by a class curve (its CUPTI duration) adds in a CUDA graph of back-to-back
  // calls: calibrate's grid, time per call in a graph less the kernel's duration, median (0: not
  // given, the kernel gap applies). Less than the kernel gap: a duration already holds the ramp.
  double library_gap_us = 0;
  // How much longer a kernel's work (its K loop and its FLOP or byte term) takes inside a whole
  // model's graph than the same kernel replayed alone, as the curves were timed: its operands
  // come from the previous kernels, not from its own last run (0: not given, taken as 1).
  double in_graph_work_scale = 0;
  // How much longer the prefill's causal attention takes between compute-bound matrix products
  // than replayed alone: the products hold the GPU at its power limit, which lowers the SM clock,
  // and the attention, bound by the SM's issue rate, slows with it (0: not given, taken as 1).
  double attention_load_scale = 0;
  // [achievable.kernels]: library kernel times by class.
  std::map<std::string, KernelCurve> kernel_curves;
  // The calibrated entry these figures were carried over from ("" = measured on this device or absent).
  std::string derived_from;
  bool empty() const {
    return memory_bandwidth_gbps <= 0 && vector_tflops.empty() && tensor_tflops.empty() && kernel_overhead_us <= 0 &&
           kernel_gap_us <= 0 && library_gap_us <= 0 && in_graph_work_scale <= 0 && attention_load_scale <= 0 && kernel_curves.empty();
  }
};

// An all-reduce's time at the sizes calibrate timed (NCCL, fp16 sum, in a CUDA graph) over `ranks`
// GPUs: between a small message and a large one NCCL switches protocols and channel counts, which
// leaves the middle sizes well off any line through two points.
struct AllReduceCurve {
  int64_t ranks = 0;
  std::vector<std::pair<double, double>> bytes_us;  // ascending bytes, each with its time (us)
  bool empty() const { return ranks < 2 || bytes_us.size() < 2; }
  // Log-log interpolation between the timed sizes; below the smallest its time, past the largest
  // the largest's time plus the rest at the bandwidth of the last two sizes.
  double us(double bytes) const;
};

// The all-reduce curves calibrated over different GPU counts (calibrate times one per host size).
struct AllReduceCurves {
  std::vector<AllReduceCurve> by_ranks;  // ascending ranks, one curve each
  bool empty() const { return by_ranks.empty(); }
  // The curve timed over `ranks` GPUs, else the one nearest in log(ranks) (the larger on a tie);
  // nullptr without curves.
  const AllReduceCurve* nearest(int64_t ranks) const;
};

struct Device {
  std::string id;  // "a100-sxm4-80gb"
  std::vector<std::string> aliases;
  std::string name;  // "A100 SXM4 80GB"
  std::string vendor;
  std::string architecture;
  std::string kind;  // "gpu" | "cpu"
  double compute_units = 0;        // SMs, CUs or cores; 0 = not published
  std::string compute_unit_name;   // "SM", "CU", "core" (the TOML key it came from)
  double boost_clock_mhz = 0;      // 0 = not published
  double memory_gb = 0;            // capacity in 1e9 bytes; 0 = unknown (no capacity check)
  double memory_bandwidth_gbps = 0;  // 1e9 bytes/s
  double l2_mb = 0;                // 0 = not published
  double l3_mb = 0;
  std::map<std::string, double> vector_tflops;  // dense peaks, TFLOP/s (TOP/s for ints)
  std::map<std::string, double> tensor_tflops;
  double tdp_w = 0;
  double launch_overhead_us = 0;  // least time of a kernel when no achievable figure is given
  AchievableCeilings achievable;
  std::optional<double> price_per_hour_usd;
  // [interconnect]: per-GPU link figures for tensor parallelism (nvlink_gbps, nvlink_latency_us,
  // pcie_gbps, pcie_latency_us; allreduce_bus_gbps, allreduce_latency_us when calibrated;
  // node_gpus, infiniband_gbps, infiniband_latency_us for pipelines that span nodes).
  std::map<std::string, double> interconnect;
  AllReduceCurves allreduce_curves;  // [interconnect] allreduce_curve (one table or an array), when calibrated
  std::map<std::string, SourceDocument> documents;
  std::map<std::string, FigureSource> sources;  // figure key ("memory_gb", "peak.tensor.fp16") -> source
  std::string origin;  // file it was loaded from, or "inline" for a custom device
  // A custom device from --peak-tflops: the one peak applies to every math path and dtype.
  std::optional<double> uniform_peak_tflops;

  // Dense peak in FLOP/s for exactly this path and dtype; 0 when the device lacks it.
  double peak_flops(MathPath path, const std::string& dtype) const;
  // The achievable ceiling for this path and dtype, FLOP/s; 0 when none is given.
  double achievable_flops(MathPath path, const std::string& dtype) const;
  double bandwidth_bytes_per_s() const { return memory_bandwidth_gbps * 1e9; }
  double memory_bytes() const { return memory_gb * 1e9; }
};

// The peak a node of `dtype` gets on `path`, with the fallback chain of docs/roofline.md
// (a missing tensor peak falls to the vector path; a missing vector peak to fp16, then fp32).
struct PeakChoice {
  MathPath path = MathPath::kVector;
  std::string dtype;  // the peak actually used, e.g. "fp32" for an fp16 node on a device without vector fp16
  double flops_per_s = 0;
};
PeakChoice choose_peak(const Device& device, MathPath wanted_path, const std::string& dtype);

// Every figure key that a device file may carry, in schema order ("sm_count", "peak.vector.fp32", ...),
// as present on `device`, with its value.
std::vector<std::pair<std::string, double>> device_figures(const Device& device);

// Parses one device file's text; throws Error naming `origin` on a syntax or schema error.
Device parse_device_toml(const std::string& text, const std::string& origin);
Device load_device_file(const std::string& path);

// Schema and sanity problems of one entry, one line each; empty when valid. Checks: required
// fields, positive numbers, a source document (title + URL) for every figure, a note on every
// derived figure, halved sparse figures, tensor peak >= vector peak for the same dtype, and
// physical upper bounds (per-unit-per-clock rates, absolute limits).
std::vector<std::string> validate_device(const Device& device);

// A device from inline figures (--peak-tflops, --bandwidth-gbps): one peak for every path and dtype.
Device make_custom_device(double peak_tflops, double bandwidth_gbps, double memory_gb = 0,
                          double launch_overhead_us = 0);
// A copy of `base` with its bandwidth and/or every peak replaced (--gpu X with --peak-tflops/--bandwidth-gbps).
Device with_overrides(const Device& base, std::optional<double> peak_tflops, std::optional<double> bandwidth_gbps);

class HardwareDb {
 public:
  // Loads every *.toml of `dir` (sorted by name); a device whose id is already known replaces it.
  // Throws Error on an unreadable directory or a bad file.
  void load_dir(const std::string& dir);
  void add(Device device);

  // Case-insensitive lookup by id, then by alias. Throws Error (kExitUsage) listing close matches.
  // The results point into the database: asking a temporary one does not compile.
  const Device& resolve(const std::string& id_or_alias) const&;
  const Device* find(const std::string& id_or_alias) const&;
  const Device& resolve(const std::string& id_or_alias) const&& = delete;
  const Device* find(const std::string& id_or_alias) const&& = delete;
  const std::vector<Device>& devices() const& { return devices_; }

 private:
  std::vector<Device> devices_;
};

// --- Derived entries (docs/hwdb.md): a GPU without a calibration gets its achievable ceilings and
// kernel curves from a calibrated one, each term rescaled by the datasheet figure that sets it. ---

// Its kernel curves were measured on the device itself (not derived).
bool is_calibrated(const Device& device);
// `a` is at least `b` on every datasheet figure the predictor reads: SMs, clock, bandwidth, L2,
// every peak `b` has, and no longer a launch overhead.
bool dominates(const Device& a, const Device& b);
// The calibrated GPU a target's figures are carried over from: one that dominates it, then the same
// vendor, the same architecture family, the nearest tensor fp16 peak and bandwidth; nullptr when
// the database has none.
const Device* derivation_reference(const HardwareDb& db, const Device& target);
// The target's ceilings from the reference's measured fractions: bandwidth x the datasheet
// bandwidth ratio; FLOP rates x the peak ratio of their path and dtype; curves: fixed cost and
// gaps unchanged (the same launch path), the K loop x the clock ratio, the FLOP rate x the tensor
// peak ratio (depthwise: both by the vector fp16 peak ratio), the byte rate x bandwidth.
AchievableCeilings derive_ceilings(const Device& target, const Device& reference);
// Derives every GPU entry that has no [achievable] figures and for which a reference exists.
void derive_missing_ceilings(HardwareDb& db);
// "calibrated", "derived from h100-sxm" or "datasheet": where a device's kernel timings come from.
std::string calibration_state(const Device& device);

// Where the shipped device files are looked for: share/modelcost/hwdb of the tree the executable is
// installed in (<bindir>/../share/modelcost/hwdb), then, for a binary of the build tree, the source
// tree's hwdb/.
std::vector<std::string> builtin_hwdb_places();
// The first of those that exists; "" when none does.
std::string builtin_hwdb_dir();

// The database a run uses: the built-in directory, then each directory in the environment variable
// MODELCOST_HWDB (':'-separated), then `extra_dirs` (--hwdb), later ones overriding by id. Throws
// Error(kExitUnreadable) naming every place it looked when that leaves no device at all.
HardwareDb load_hardware_db(const std::vector<std::string>& extra_dirs = {}, bool read_environment = true);

// "'a100' is an alias of a100-sxm4-80gb (A100 SXM4 80GB)"; "" when the query was the id itself.
std::string describe_resolution(const std::string& query, const Device& device);

// --gpu auto: the entry for a local GPU, from its reported name ("NVIDIA H100 80GB HBM3"), SM count
// and memory: entries sharing the name's model token (h100, a100, l4, ...) are candidates, and the
// one with the same SM count, then the closest memory size, wins. nullptr when none matches.
const Device* match_local_device(const HardwareDb& db, const std::string& gpu_name, int sm_count, double memory_gb);

// --list-gpus: a header line, then one device per line (id, name, memory, bandwidth, main peaks, aliases).
std::string format_device_list(const HardwareDb& db);

}  // namespace modelcost
