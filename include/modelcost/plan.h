// Capacity planning: memory footprint from tensor lifetimes, a batch sweep on one device, the
// largest batch that fits, devices needed for a target load, and a side-by-side device comparison.
// Method in docs/roofline.md ("Capacity plan").
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/hardware.h"
#include "modelcost/roofline.h"

namespace modelcost {

struct MemoryFootprint {
  double weights_bytes = 0;          // unique initializers (after the --dtype recast)
  double peak_activation_bytes = 0;  // most bytes of non-initializer tensors live at once
  size_t peak_node = 0;              // index into Analysis::nodes where the peak occurs
};

// Tensor lifetimes over the top-level nodes in topological order: a tensor is live from the node
// that produces it to its last consumer; graph inputs from the start, graph outputs to the end;
// Reshape/Squeeze/Unsqueeze/Flatten/Identity outputs alias their input and add nothing.
MemoryFootprint memory_footprint(const Analysis& analysis, const std::string& dtype_option = "");

// The whole analysis with the batch dimension set to `batch` (analyze() of the same model).
using AnalysisForBatch = std::function<Analysis(int64_t batch)>;

struct PlanOptions {
  // The batches to evaluate (--batch 1,8,32,128). Empty with a target (QPS or SLO): the plan sweeps
  // powers of two while they fit and meet the SLO, then bisects to the largest batch that does.
  std::vector<int64_t> batches = {1};
  std::string dtype;                   // --dtype, as for the roofline
  std::string view = "deployed";       // --view, as for the roofline
  bool datasheet = false;              // --ceilings datasheet, as for the roofline
  std::optional<double> target_qps;    // --target-qps
  std::optional<double> latency_slo_ms;  // --latency-slo-ms
  std::optional<double> price_per_hour_usd;  // overrides the device's price
  double workspace_bytes = 0;  // fixed runtime reserve added to every batch (CUDA context, library workspaces)
  bool search_max_batch = true;
  int64_t max_batch_limit = int64_t{1} << 20;  // the search stops here
};

struct PlanRow {
  int64_t batch = 0;
  double latency_ms = 0;        // roofline prediction of one batch
  double throughput_per_s = 0;  // batch / latency
  double weights_bytes = 0;
  double peak_activation_bytes = 0;
  double workspace_bytes = 0;
  double memory_bytes = 0;      // weights + peak activations + workspace
  bool fits = true;             // memory_bytes <= device memory (true when the device gives none)
  bool meets_slo = true;        // latency_ms <= latency_slo_ms (true without an SLO)
  std::optional<double> cost_per_million_usd;  // price / throughput
};

struct CapacityPlan {
  const Device* device = nullptr;
  std::string dtype;
  std::vector<PlanRow> rows;  // one per requested batch, in the order given (or the sweep's, ascending)
  bool swept = false;         // the rows come from the plan's own batch sweep
  // Largest batch whose memory fits: 0 when batch 1 does not fit; nullopt when not searched or the
  // device gives no memory size. max_batch_capped: the search reached max_batch_limit.
  std::optional<int64_t> max_batch_fits;
  bool max_batch_capped = false;
  std::optional<PlanRow> max_batch_row;
  // With target_qps: the batch (among the rows and the largest fitting batch) that needs the fewest
  // devices while fitting and meeting the SLO, and that count.
  std::optional<PlanRow> best;
  std::optional<int64_t> devices_needed;
  std::optional<double> target_qps;
  std::optional<double> latency_slo_ms;
  std::vector<std::string> notes;  // why no best batch, capped search, ...
};

// Evaluates one batch's analysis on the device (no callbacks).
PlanRow plan_row(const Analysis& analysis, int64_t batch, const Device& device, const PlanOptions& options);

// Throws Error (kExitUsage) for an empty or non-positive batch list or a non-positive target/SLO.
CapacityPlan plan_capacity(const AnalysisForBatch& analyse, const Device& device, const PlanOptions& options);

// --gpu a,b,c: the same analysis on several devices, one row each, in the order given.
struct DeviceComparisonRow {
  const Device* device = nullptr;
  double latency_ms = 0;
  double throughput_per_s = 0;
  size_t compute_bound = 0, memory_bound = 0, overhead_bound = 0;
  double memory_bytes = 0;
  bool fits = true;
  std::optional<double> cost_per_million_usd;
  std::string verdict;
};
std::vector<DeviceComparisonRow> compare_devices(const Analysis& analysis, const std::vector<const Device*>& devices,
                                                 const RooflineOptions& options, double workspace_bytes = 0);

}  // namespace modelcost
