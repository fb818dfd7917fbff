// Stage "measure": runs each node of an analysed model on a real device (NVIDIA GPU through
// CUDA, or the CPU reference kernels) and reports measured kernel times per node, the whole
// model's measured latency, and an empirical roofline of the device (calibrate).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/fusion.h"
#include "modelcost/hardware.h"

namespace modelcost {

// When sampling a node stops being worth it (docs/measurement.md, "Timing rules").
enum class Convergence {
  kMedianError,  // the median's relative standard error is below max_noise (the default)
  kSpread,       // the samples' relative standard deviation is below max_noise (nvbench's "stdrel")
};

struct MeasureOptions {
  bool cold = false;                 // flush L2 before every sample (default: L2 warm)
  bool autotune = false;             // time candidate algorithms (cuBLASLt, cuDNN) instead of heuristics
  std::string dtype;                 // "" = the model's own; "fp32", "tf32", "fp16", "bf16": float tensors cast
  double max_seconds_per_node = 0.1;  // sampling time limit per node (nvbench's timeout)
  int min_samples = 10;              // at least this many samples
  Convergence convergence = Convergence::kMedianError;
  double max_noise = 0.005;          // ...and stop once the convergence test's noise figure is below this
  bool cpu = false;                  // time the CPU reference kernels instead of the GPU
  int device = 0;                    // CUDA device ordinal
  // --counters: one extra run of each node after its timing under CUPTI's range profiler, for
  // DRAM bytes and executed FLOPs (GPU only; where the profiler refuses, the node keeps its
  // time and counters_reason says why).
  bool counters = false;
  // Called after each node: (nodes done, nodes total, node name). For a progress bar.
  std::function<void(size_t, size_t, const std::string&)> progress;
};

// Summary of the timed samples of one node (or of the whole model).
struct NodeMeasurement {
  bool measured = false;         // false: reason says why (unsupported op, unshaped, ...)
  std::string reason;
  bool zero_cost = false;        // data-movement-only node (Reshape, Squeeze, ...): 0 us, nothing runs
  double median_us = 0, min_us = 0, max_us = 0, mean_us = 0;
  double rel_stddev = 0;         // standard deviation / mean
  int samples = 0;
  std::vector<std::string> kernels;  // names of the kernels one sample launched, in order
  std::string implementation;        // "cudnn conv NHWC algo=1", "cublasLt", "kernel elementwise", "cpu eigen"
  // Not run again: the figure of this earlier node, identical in op, attributes, input and output
  // shapes and dtypes (measure_nodes measures each distinct node once).
  std::string same_as;
  // Hardware counters of one run (MeasureOptions::counters; docs/measurement.md lists the metrics).
  bool has_counters = false;
  std::string counters_reason;       // why there are none, when they were asked for
  double dram_bytes_read = 0, dram_bytes_written = 0;
  // FP32 + FP16 add / mul / FMA (x2) thread instructions + tensor-pipe ops; has_executed_flops
  // false where the counters saw none (a pure copy, a node that did not run).
  bool has_executed_flops = false;
  double executed_flops = 0;
  double measured_intensity = 0;     // executed_flops / (dram_bytes_read + dram_bytes_written); 0 without DRAM traffic
};

struct DeviceInfo {
  bool is_gpu = false;
  std::string name;              // "NVIDIA H100 80GB HBM3", or the CPU model name
  int compute_capability_major = 0, compute_capability_minor = 0;
  int multiprocessors = 0;       // SMs (GPU) or hardware threads (CPU)
  double sm_clock_mhz = 0;       // max SM clock
  double memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  double memory_bytes = 0;
  double l2_bytes = 0;
  double datasheet_bandwidth_gbps = 0;  // 2 * memory clock * bus width (0 where not known)
  std::string driver;            // "CUDA driver 13.0, runtime 13.0, cuDNN 9.19"
};

// One kernel of a replayed graph: its start after the first kernel's start, and its duration.
struct KernelInterval {
  std::string name;
  double start_us = 0, duration_us = 0;
};

struct ModelMeasurement {
  bool measured = false;
  std::string reason;
  double median_us = 0, min_us = 0, max_us = 0, rel_stddev = 0;
  int samples = 0;
  double sum_of_node_medians_us = 0;  // filled by measure_model from the per-node figures passed in
  std::string method;                 // "cuda graph replay, cuda events"
  // Inside one replay (GPU: CUPTI kernel records of the graph launch; medians over replays):
  // how many kernels ran, the sum of their durations and first start to last end. The rest of
  // the latency is the GPU idle between kernels and before the first one.
  bool has_kernel_breakdown = false;
  int kernels_per_run = 0;
  double kernel_busy_us = 0, kernel_span_us = 0;
  // The kernels of the breakdown's median replay (by span), in order: where the idle falls.
  std::vector<KernelInterval> replay_kernels;
};

// One fusion group of the deployed view timed as the kernels a runtime runs for it.
struct GroupMeasurement {
  size_t group = 0;         // FusedGroup::id
  NodeMeasurement timing;   // the group's launches as one sample (kernels listed in timing.kernels)
  bool fused = false;       // one fused runner covers every member
  bool fell_back = false;   // no fused runner covers it: members ran their own kernels in sequence
  std::string fallback_reason;
  std::string runner;       // "cudnn conv+bias+add+relu", "cublasLt +bias+gelu epilogue", "flash attention", ...
};

// --measure in the deployed view: every group timed alone, then all of them as one CUDA graph.
struct DeployedMeasurement {
  bool measured = false;
  std::string reason;
  std::vector<GroupMeasurement> groups;  // one per FusionPlan group, in its order
  ModelMeasurement whole;                // CUDA graph replay of the groups
  double sum_of_group_medians_us = 0;
  size_t fused_groups = 0, fallback_groups = 0, empty_groups = 0;
  size_t non_kernel_nodes = 0;           // memset, copy, host or event nodes in the captured graph
};

// One library call of calibrate's grid (generic shapes, never a model's): a cuBLASLt GEMM, a cuDNN
// convolution or an elementwise kernel, fp16.
struct LibraryKernelSample {
  std::string kind;            // kernel class: gemm, conv1x1, conv, depthwise, attention, pointwise
  std::string shape;           // "M=256 N=1024 K=4096", "N=32 C=64>256 56x56 k3 s1", ...
  std::string implementation;  // the runner's choice
  double flops = 0, bytes = 0; // work: 2*MACs; inputs + outputs read and written once
  double k = 0;                // reduction length: GEMM K, conv input channels per group x taps
  double kernel_us = 0;        // median summed kernel durations of one call (CUPTI), all data in L2
  double graph_us = 0;         // time per call in a CUDA graph of back-to-back dependent calls
  double fresh_us = 0;         // kernel_us with only the first input in L2 (weights from DRAM); 0: not measured
  // What the call's kernels take in a model: their fresh durations (a model's previous kernel just
  // wrote the first input). The idle time between kernels is the device's kernel gap, which the
  // roofline adds per kernel: graph_us depends on whether a profiler traced the replays.
  double model_us() const { return fresh_us > 0 ? fresh_us : kernel_us; }
  int kernels = 0;             // kernels one call launches
};

struct CalibrationResult {
  DeviceInfo device;
  double dram_gbps = 0;               // achievable, read + write bytes of a streaming copy
  double fp32_vector_tflops = 0;      // FMA kernel, 2 flops per FMA
  double fp16_vector_tflops = 0;      // half2 FMA kernel
  std::map<std::string, double> tensor_tflops;  // "fp32", "tf32", "fp16", "bf16", "fp8": large GEMMs
  double graph_kernel_us = 0;   // time per empty kernel launched back to back in a CUDA graph
  double small_kernel_us = 0;   // time per small DRAM-copy kernel (256 KiB) back to back in a CUDA graph
  double kernel_gap_us = 0;     // idle time between the end of one kernel and the start of the next dependent one
  double kernel_overhead_us = 0;  // small_kernel_us less the gap and its traffic: the least time a kernel takes
  std::vector<LibraryKernelSample> library_kernels;  // the grid (empty when not run)
  double library_gap_us = 0;    // median over the grid of graph_us less kernel_us: idle time per library call
  double attention_load_scale = 0;  // the prefill attention between compute-bound products over alone (>= 1)
  std::map<std::string, KernelCurve> library_curves;  // fitted to the grid (fit_library_curves)
  int allreduce_ranks = 0;            // GPUs of the NCCL all-reduce measured (0: one GPU or no NCCL)
  double allreduce_bus_gbps = 0;      // its bus bandwidth and per-step latency (docs/llm.md)
  double allreduce_latency_us = 0;
  AllReduceCurve allreduce_curve;     // its time at every size timed (1 KiB to 256 MiB)
  std::vector<std::string> notes;     // how each figure was obtained (sizes, kernels)
};

// One step of a decoder as a serving runtime runs it (`modelcost llm --measure`, docs/llm.md
// "Measuring"): the shapes recognised in the graph, random weights and a KV cache of random data.
// The step holds `batch` decoding sequences and `prefills` sequences each adding a chunk of
// `prefill_tokens` positions after `prefill_past` cached ones: a decode step (no prefills), a
// prefill (batch 0) or an iteration that mixes them, as a continuously batching server runs.
struct ServingStepSpec {
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  bool gated_mlp = true;           // silu(gate) * up; else one up projection and gelu
  // A mixture of experts (experts > 0): the first dense_layers layers have the MLP above, the
  // others route each token to experts_per_token of `experts` gated MLPs of expert_width, plus a
  // shared gated MLP of shared_expert_width (0: none) that every token takes.
  int64_t experts = 0, experts_per_token = 0, expert_width = 0, shared_expert_width = 0, dense_layers = 0;
  // Multi-head latent attention (DeepSeek-V2/V3) where kv_lora_rank > 0: the cache holds a latent
  // of kv_lora_rank and a rotary key of rope_head_dim per position, shared by the heads; queries
  // of nope + rope widths (through a rank-q_lora_rank pair when it is > 0), values of v_head_dim.
  // head_dim and kv_heads are then unused.
  int64_t kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0, nope_head_dim = 0, v_head_dim = 0;
  int64_t batch = 1;               // decoding sequences
  int64_t context = 1;             // positions the new token attends (the cache holds context - 1)
  int64_t prefills = 0, prefill_tokens = 0, prefill_past = 0;
  int64_t tensor_parallel = 1;     // GPUs 0 .. tp-1; NCCL all-reduce after each row-parallel product
  int warmup = 10, repeats = 50;   // CUDA-graph replays
};

// The kernels of one role in the step ("QKV product", "attention", ...; serving_step_kernel_roles):
// their count and their time from the first one's start to the next role's start (their durations
// and the idle time after each), summed over the step.
struct KernelRoleTiming {
  std::string role;
  int64_t kernels = 0;
  double us = 0;
  // A collective's own time: the step's calls of this role timed alone, every GPU arriving at once
  // (us counts, besides, the wait for the slowest GPU of the group); 0 for the other roles.
  double alone_us = 0;
};

// The roles of the deployed step's kernels, in launch order of a layer (and around it).
const std::vector<std::string>& serving_step_kernel_roles();

struct ServingStepTiming {
  bool measured = false;
  std::string reason;              // why not, when not measured
  double median_us = 0, min_us = 0, p10_us = 0, p90_us = 0, max_us = 0;  // per step, over the replays
  int samples = 0;
  int64_t kernels = 0;             // kernel nodes of one device's CUDA graph (collectives included)
  // One more replay with CUPTI kernel records (after the timed ones): the kernels' summed time and
  // their span, and the time per kernel kind ("rms_norm_kernel 45x 61.2 us; ...", largest first).
  double kernel_busy_us = 0, kernel_span_us = 0;
  std::string kernel_breakdown;
  std::vector<KernelRoleTiming> by_role;  // the same replay by role, in launch order; empty without CUPTI
  std::string implementation;      // the attention split and the GEMM algorithms chosen
};

// A measuring device. GPU or CPU; make_backend picks one.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo device() const = 0;
  // Measures one node in isolation on random data of its shapes and dtypes. Never throws for an
  // unsupported node: returns measured=false with a reason.
  virtual NodeMeasurement measure_node(const NodeAnalysis& node, const MeasureOptions& options) = 0;
  // Work done for all of a model's nodes at once before they are measured one by one (the GPU
  // builds the cuDNN graphs its nodes' candidates run together, on threads); none by default.
  virtual void prepare_nodes(const Analysis& /*analysis*/, const MeasureOptions& /*options*/) {}
  // Runs the whole graph end to end (CUDA graph replay on the GPU). measured=false with a reason
  // when some node cannot run.
  virtual ModelMeasurement measure_model(const Analysis& analysis, const MeasureOptions& options) = 0;
  virtual CalibrationResult calibrate(const MeasureOptions& options) = 0;
  // Times each group of `plan` as one kernel where a library or a fused kernel runs it, then the
  // groups as one CUDA graph. The default (CPU): measured=false, the GPU only.
  virtual DeployedMeasurement measure_deployed(const Analysis& analysis, const FusionPlan& plan,
                                               const MeasureOptions& options);
  // Times an LLM's deployed serving step (decode, prefill or both: CUDA graph replays, NCCL over
  // GPUs 0..tp-1) with this backend's timer. A step that cannot run is measured=false with the
  // reason; the default (CPU): measured=false, the GPU only.
  virtual ServingStepTiming measure_serving_step(const ServingStepSpec& spec);
  // Where this process's measurement wall time went so far: seconds per phase and counts, in
  // first-seen order (empty where the backend keeps none). Phases nest (docs/measurement.md).
  virtual std::vector<std::pair<std::string, double>> wall_breakdown() const { return {}; }
};

// True when the CUDA module (the GPU backend, loaded at run time) is found; it is not loaded.
bool cuda_support_compiled();
// The GPU backend, or the CPU reference backend when cpu is true. Throws Error(kExitRuntime,
// "no NVIDIA GPU ...") when cpu is false and there is no GPU, no driver, or no loadable CUDA module.
std::unique_ptr<Backend> make_backend(bool cpu, int device = 0);

// Measures every node of the analysis in order, one result per analysis.nodes entry.
std::vector<NodeMeasurement> measure_nodes(const Analysis& analysis, Backend& backend, const MeasureOptions& options);
// Whole-model run; fills sum_of_node_medians_us from `nodes` (as returned by measure_nodes).
ModelMeasurement measure_model(const Analysis& analysis, Backend& backend, const MeasureOptions& options,
                               const std::vector<NodeMeasurement>& nodes);

// A hwdb entry (TOML) built from calibrated figures, for --hwdb. `id` names the entry.
std::string calibration_to_hwdb_toml(const CalibrationResult& result, const std::string& id);
// The kernel curve of each class fitted to the grid's graph times (kernel_curve_fit.h).
std::map<std::string, KernelCurve> fit_library_curves(const std::vector<LibraryKernelSample>& grid);
// Median over the grid's samples timed both ways of graph_us less kernel_us (the LLM step's kinds,
// timed in graphs only, excluded): what a curve-priced kernel adds in a graph (library_gap_us).
double median_library_gap_us(const std::vector<LibraryKernelSample>& grid);
// Reads a grid back from library_kernels_csv's text (for refitting without the GPU); throws
// Error naming `origin` on a malformed row.
std::vector<LibraryKernelSample> parse_library_kernels_csv(const std::string& text, const std::string& origin);
// The grid as CSV, one call per row.
std::string library_kernels_csv(const CalibrationResult& result);
// Human-readable table of the calibrated figures, beside the datasheet ones where given
// (datasheet keys: "dram_gbps", "fp32_vector", "fp16_vector", "fp32", "tf32", "fp16", "bf16", "fp8").
std::string format_calibration(const CalibrationResult& result, const std::map<std::string, double>& datasheet = {});

}  // namespace modelcost
