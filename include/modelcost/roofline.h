// Per-node roofline on one device: which peak applies, the bound, the predicted time and its share.
// Formulas and the fallback rules are in docs/roofline.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "modelcost/analysis.h"
#include "modelcost/fusion.h"
#include "modelcost/hardware.h"

namespace modelcost {

// kOverhead: the kernel's fixed cost (launch and ramp) is longer than both its math and its traffic.
enum class Bound { kNone, kCompute, kMemory, kOverhead };
const char* bound_name(Bound bound);  // "none" | "compute" | "memory" | "overhead"

struct RooflineOptions {
  // --dtype: "" keeps each tensor's own dtype; fp16|bf16|fp32|tf32|fp8|int8 re-costs as if every
  // float tensor (weights and activations) were cast to it: bytes scale, FLOPs do not.
  std::string dtype;
  std::string model_name;  // for the verdict; "" = the model file's stem
  int64_t batch = 0;       // for the verdict and throughput; 0 = not stated
  // "deployed": the verdict and the latency count the fused kernels a runtime runs (the fusion
  // stage's groups); "as-written": one kernel per ONNX node. Both totals are always computed.
  std::string view = "deployed";
  // false: achievable ceilings where the device gives them (docs/hwdb.md); true: datasheet peaks only.
  bool datasheet = false;
  // The groups to place; nullptr: fuse(analysis) is run here.
  std::shared_ptr<const FusionPlan> fusion;
};

struct NodeRoofline {
  bool costed = false;      // the node's cost is known
  bool launches = false;    // runs a kernel (and pays the launch overhead)
  bool folded = false;      // every output was computed at analysis time (shape arithmetic, Constant):
                            // a runtime folds it too, so it runs no kernel
  MathPath path = MathPath::kVector;
  std::string compute_dtype;  // the node's dtype after --dtype ("fp16", "int8", ...)
  std::string peak_dtype;     // the peak actually used after fallbacks (docs/roofline.md)
  double peak_flops = 0;      // FLOP/s of that peak
  double flops = 0;
  double bytes = 0;           // after the --dtype recast
  double intensity = 0;       // flops / bytes
  double attainable_flops = 0;  // min(peak, intensity x bandwidth), FLOP/s
  Bound bound = Bound::kNone;
  double datasheet_peak_flops = 0;  // the datasheet roof above `peak_flops` (the upper bound)
  double compute_us = 0, memory_us = 0, overhead_us = 0;  // the three terms of the kernel time
  double predicted_us = 0;    // max(compute, memory, overhead) + inter-kernel gap
  double share = 0;           // of the view's total predicted time, 0..1
  bool library_tail = false;  // a group's library call leaves work to a kernel after it (runs_library_tail)
};

struct RooflineTotals {
  double predicted_latency_ms = 0;  // sum of predicted_us over nodes
  double flops = 0, bytes = 0;
  size_t compute_bound = 0, memory_bound = 0, overhead_bound = 0, no_bound = 0, uncosted = 0;
  size_t folded = 0;  // of no_bound: nodes whose outputs are known constants
  size_t launches = 0;
};

// One roof of the plot: a peak some node uses.
struct Roof {
  MathPath path = MathPath::kVector;
  std::string dtype;
  double peak_flops = 0;            // the ceiling used (achievable where the device gives one)
  double datasheet_peak_flops = 0;  // the datasheet peak above it: the upper bound
  double ridge_intensity = 0;  // FLOP/byte where the bandwidth slope meets this peak
  size_t nodes = 0;            // nodes placed under it
};

// The figures the report used for every kernel.
struct Ceilings {
  bool achievable = false;          // achievable ceilings were used (some figures may still be datasheet)
  double bandwidth_bytes_per_s = 0;
  double datasheet_bandwidth_bytes_per_s = 0;
  double overhead_us = 0;           // least time of a kernel
  double gap_us = 0;                // idle time between dependent kernels
  double curve_gap_us = 0;          // what a kernel priced by a class curve adds in a graph (library_gap_us, else gap_us)
  double work_scale = 1;            // a calibrated kernel's work inside a whole-model graph over its work alone
  double attention_load_scale = 1;  // an attention kernel's work between compute-bound products over its work alone
  // Kernel classes whose calibrated curve times kernels (hwdb [achievable.kernels]); empty: none.
  std::vector<std::string> kernel_curves;
  // Where those figures come from: "calibrated" (measured on this GPU), "derived from <entry>"
  // (carried over from a calibrated GPU by datasheet ratios) or "datasheet" (peaks only).
  std::string calibration = "datasheet";
};

struct RooflineReport {
  const Device* device = nullptr;
  std::string dtype;  // the --dtype given, or the model's dominant float dtype
  std::string recast_dtype;  // the --dtype given, "" when tensors keep their own dtypes
  int64_t batch = 0;
  std::string view;   // "deployed" | "as-written"
  Ceilings ceilings;
  std::vector<NodeRoofline> nodes;  // parallel to Analysis::nodes: the graph as written
  RooflineTotals totals;            // over nodes (as written)
  std::shared_ptr<const FusionPlan> fusion;
  std::vector<NodeRoofline> groups;  // parallel to fusion->groups: the kernels as deployed
  RooflineTotals deployed;           // over groups
  const RooflineTotals& view_totals() const { return view == "deployed" ? deployed : totals; }
  double latency_ms() const { return view_totals().predicted_latency_ms; }
  std::vector<Roof> roofs;          // peaks used by at least one node, highest first
  std::string verdict;              // "ResNet-50 on A100 SXM4 80GB, fp32, batch 1: 41 of 53 Conv layers memory-bound; predicted 0.6 ms"
};

// `device` must outlive the report. Throws Error (kExitUsage) on an unknown --dtype.
RooflineReport compute_roofline(const Analysis& analysis, const Device& device, const RooflineOptions& options = {});

// --- Building blocks, public for the plan stage, the reports and the tests. ---

// Throws Error (kExitUsage) unless `view` is "deployed" or "as-written".
void check_view_option(const std::string& view);
// Throws Error (kExitUsage) unless `dtype` is "" or one of fp16 bf16 fp32 tf32 fp8 int8.
void check_dtype_option(const std::string& dtype);
// Peak dtype name of an ONNX element type: FLOAT -> "fp32", FLOAT16 -> "fp16", INT8/UINT8 -> "int8", ...;
// "" for types with no peak of their own (int64, bool, ...).
std::string peak_dtype_of(int32_t onnx_dtype);
// Bytes per element of a tensor of `onnx_dtype` once --dtype is applied (float tensors take the
// option's size; integer and quantized tensors keep theirs).
double recast_element_size(int32_t onnx_dtype, const std::string& dtype_option);
// Ops whose work runs on matrix units when their dtype has a tensor peak (MatMul, Gemm, Conv, ...).
bool is_matrix_op(const std::string& op_type, const std::string& domain);
// The node's compute dtype ("fp32", "fp16", "int8", ...) after --dtype.
std::string node_compute_dtype(const NodeAnalysis& node, const std::string& dtype_option);
// True when every output of the node has contents known at analysis time.
bool is_folded(const NodeAnalysis& node);
// The node's bytes read and written after --dtype, each a whole number of bytes.
struct RecastBytes {
  double read = 0, written = 0;
};
RecastBytes recast_node_bytes_split(const NodeAnalysis& node, const std::string& dtype_option);
// The node's bytes read + written after --dtype.
double recast_node_bytes(const NodeAnalysis& node, const std::string& dtype_option);
// A group's boundary bytes after --dtype (scaled as its boundary tensors' sizes change).
double recast_group_bytes(const FusedGroup& group, const Analysis& analysis, const std::string& dtype_option);

}  // namespace modelcost
