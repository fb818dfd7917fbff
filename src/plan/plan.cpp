// Batch sweep, largest fitting batch, devices for a target load, and device comparison
// (docs/roofline.md, "Capacity plan").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "modelcost/errors.h"
#include "modelcost/plan.h"

namespace modelcost {
namespace {

const char* kBatchInvariant =
    "the analysis does not change with the batch size (is the batch dimension set?); no largest batch computed";

std::optional<double> cost_per_million(std::optional<double> price_per_hour, double throughput_per_s) {
  if (!price_per_hour || !(throughput_per_s > 0)) return std::nullopt;
  return *price_per_hour / 3600.0 / throughput_per_s * 1e6;
}

void check_options(const PlanOptions& o) {
  if (o.batches.empty() && !o.target_qps && !o.latency_slo_ms)
    throw Error(kExitUsage, "the batch list is empty (the plan sweeps batches itself only for a --target-qps or --latency-slo-ms)");
  if (o.price_per_hour_usd && !(*o.price_per_hour_usd > 0)) throw Error(kExitUsage, "the price per hour must be above 0");
  for (int64_t b : o.batches)
    if (b <= 0) throw Error(kExitUsage, fmt::format("batch sizes must be at least 1 (got {})", b));
  if (o.target_qps && !(*o.target_qps > 0)) throw Error(kExitUsage, "--target-qps must be above 0");
  if (o.latency_slo_ms && !(*o.latency_slo_ms > 0)) throw Error(kExitUsage, "--latency-slo-ms must be above 0");
  if (o.workspace_bytes < 0) throw Error(kExitUsage, "the workspace reserve cannot be negative");
  if (o.max_batch_limit < 1) throw Error(kExitUsage, "the batch search limit must be at least 1");
  check_dtype_option(o.dtype);
}

class BatchEvaluator {
 public:
  BatchEvaluator(const AnalysisForBatch& analyse, const Device& device, const PlanOptions& options)
      : analyse_(analyse), device_(device), options_(options) {}
  const PlanRow& row(int64_t batch) {
    auto it = rows_.find(batch);
    if (it != rows_.end()) return it->second;
    return rows_[batch] = plan_row(analyse_(batch), batch, device_, options_);
  }
  const std::map<int64_t, PlanRow>& rows() const { return rows_; }

 private:
  const AnalysisForBatch& analyse_;
  const Device& device_;
  const PlanOptions& options_;
  std::map<int64_t, PlanRow> rows_;
};

// Doubling then bisection on "fits", seeded with the batches already evaluated.
void search_max_batch(BatchEvaluator& eval, const PlanOptions& options, CapacityPlan& plan) {
  // lo: largest batch known to fit; hi: smallest batch known not to fit (0 = none known yet).
  int64_t lo = 0, hi = 0;
  auto update = [&]() {
    hi = 0;
    for (const auto& [b, r] : eval.rows())
      if (!r.fits && (hi == 0 || b < hi)) hi = b;
    lo = 0;
    for (const auto& [b, r] : eval.rows())
      if (r.fits && (hi == 0 || b < hi)) lo = std::max(lo, b);
  };
  try {
    update();
    if (lo == 0 && hi != 1) {
      eval.row(1);
      update();
    }
    if (lo == 0) {
      plan.max_batch_fits = 0;
      return;
    }
    while (hi == 0) {
      if (lo >= options.max_batch_limit) {
        plan.max_batch_capped = true;
        plan.notes.push_back(fmt::format("memory still fits at batch {}, the search limit; the largest batch may be higher", lo));
        break;
      }
      const int64_t next = std::min(lo * 2, options.max_batch_limit);
      const double before = eval.row(lo).memory_bytes, after = eval.row(next).memory_bytes;
      update();
      if (hi == 0 && after <= before) {
        plan.notes.push_back(kBatchInvariant);
        return;
      }
    }
    while (hi != 0 && hi - lo > 1) {
      eval.row(lo + (hi - lo) / 2);
      update();
    }
  } catch (const Error& e) {
    plan.notes.push_back(fmt::format("the largest-batch search stopped: {}", e.what()));
    if (lo == 0) return;
  }
  plan.max_batch_fits = lo;
  plan.max_batch_row = eval.rows().at(lo);
}

// No batch list but a target: powers of two from 1 while they fit and meet the SLO, then
// bisection between the last that does and the first that does not, so the largest batch that
// meets the SLO is a row too. Latency grows with the batch, so the first miss ends the doubling.
void sweep_batches(BatchEvaluator& eval, const PlanOptions& options, CapacityPlan& plan) {
  auto good = [&](const PlanRow& r) { return r.fits && r.meets_slo; };
  int64_t lo = 0, hi = 0;  // largest good batch, smallest bad one (0: none)
  try {
    for (int64_t b = 1;; b = std::min(b * 2, options.max_batch_limit)) {
      const PlanRow& r = eval.row(b);
      plan.rows.push_back(r);
      if (!good(r)) {
        hi = b;
        break;
      }
      // Identical figures: the batch never reached the graph (plan_capacity notes it).
      if (lo > 0 && r.latency_ms == eval.row(lo).latency_ms && r.memory_bytes == eval.row(lo).memory_bytes) return;
      lo = b;
      if (b >= options.max_batch_limit) {
        plan.notes.push_back(fmt::format("the batch sweep stopped at its limit, batch {}", b));
        return;
      }
    }
    while (lo > 0 && hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (good(eval.row(mid)) ? lo : hi) = mid;
    }
  } catch (const Error& e) {
    plan.notes.push_back(fmt::format("the batch sweep stopped: {}", e.what()));
  }
  if (lo > 0 && (lo & (lo - 1)) != 0) plan.rows.push_back(eval.row(lo));
  std::sort(plan.rows.begin(), plan.rows.end(), [](const PlanRow& a, const PlanRow& b) { return a.batch < b.batch; });
  plan.swept = true;
}

void choose_best(CapacityPlan& plan) {
  std::vector<PlanRow> candidates = plan.rows;
  if (plan.max_batch_row) {
    bool listed = false;
    for (const auto& r : plan.rows) listed = listed || r.batch == plan.max_batch_row->batch;
    if (!listed) candidates.push_back(*plan.max_batch_row);
  }
  const PlanRow* best = nullptr;
  auto devices_for = [&](const PlanRow& r) { return std::ceil(*plan.target_qps / r.throughput_per_s); };
  for (const auto& r : candidates) {
    if (!r.fits || !r.meets_slo || !(r.throughput_per_s > 0)) continue;
    if (!best) {
      best = &r;
      continue;
    }
    if (plan.target_qps) {
      const double a = devices_for(r), b = devices_for(*best);
      if (a < b || (a == b && r.latency_ms < best->latency_ms)) best = &r;
    } else if (r.throughput_per_s > best->throughput_per_s) {
      best = &r;
    }
  }
  if (!best) {
    plan.notes.push_back(plan.latency_slo_ms
                             ? fmt::format("no batch both fits in memory and meets the {:g} ms latency SLO", *plan.latency_slo_ms)
                             : std::string("no batch fits in the device's memory"));
    return;
  }
  plan.best = *best;
  if (plan.target_qps) plan.devices_needed = static_cast<int64_t>(devices_for(*best));
}

}  // namespace

PlanRow plan_row(const Analysis& analysis, int64_t batch, const Device& device, const PlanOptions& options) {
  RooflineOptions ro;
  ro.dtype = options.dtype;
  ro.batch = batch;
  ro.view = options.view;
  ro.datasheet = options.datasheet;
  const RooflineReport roof = compute_roofline(analysis, device, ro);
  const MemoryFootprint fp = memory_footprint(analysis, options.dtype);
  PlanRow row;
  row.batch = batch;
  row.latency_ms = roof.latency_ms();
  row.throughput_per_s = row.latency_ms > 0 ? static_cast<double>(batch) / (row.latency_ms / 1e3) : 0;
  row.weights_bytes = fp.weights_bytes;
  row.peak_activation_bytes = fp.peak_activation_bytes;
  row.workspace_bytes = options.workspace_bytes;
  row.memory_bytes = fp.weights_bytes + fp.peak_activation_bytes + options.workspace_bytes;
  row.fits = device.memory_gb <= 0 || row.memory_bytes <= device.memory_bytes();
  row.meets_slo = !options.latency_slo_ms || row.latency_ms <= *options.latency_slo_ms;
  row.cost_per_million_usd =
      cost_per_million(options.price_per_hour_usd ? options.price_per_hour_usd : device.price_per_hour_usd, row.throughput_per_s);
  return row;
}

CapacityPlan plan_capacity(const AnalysisForBatch& analyse, const Device& device, const PlanOptions& options) {
  check_options(options);
  CapacityPlan plan;
  plan.device = &device;
  plan.dtype = options.dtype;
  plan.target_qps = options.target_qps;
  plan.latency_slo_ms = options.latency_slo_ms;
  BatchEvaluator eval(analyse, device, options);
  if (options.batches.empty()) sweep_batches(eval, options, plan);
  for (int64_t b : options.batches) plan.rows.push_back(eval.row(b));
  // Identical figures for different batch sizes mean the batch never reached the graph.
  bool distinct_batches = false, invariant = true;
  for (const auto& r : plan.rows) {
    if (r.batch == plan.rows[0].batch) continue;
    distinct_batches = true;
    if (r.memory_bytes != plan.rows[0].memory_bytes || r.latency_ms != plan.rows[0].latency_ms) invariant = false;
  }
  invariant = invariant && distinct_batches;
  if (invariant) {
    plan.notes.push_back(kBatchInvariant);
  } else if (options.search_max_batch) {
    if (device.memory_gb > 0) search_max_batch(eval, options, plan);
    else plan.notes.push_back("the device gives no memory size, so no largest batch is computed");
  }
  choose_best(plan);
  return plan;
}

std::vector<DeviceComparisonRow> compare_devices(const Analysis& analysis, const std::vector<const Device*>& devices,
                                                 const RooflineOptions& options, double workspace_bytes) {
  const MemoryFootprint fp = memory_footprint(analysis, options.dtype);
  const double batch = options.batch > 0 ? static_cast<double>(options.batch) : 1.0;
  std::vector<DeviceComparisonRow> rows;
  for (const Device* d : devices) {
    const RooflineReport r = compute_roofline(analysis, *d, options);
    DeviceComparisonRow row;
    row.device = d;
    row.latency_ms = r.latency_ms();
    row.throughput_per_s = row.latency_ms > 0 ? batch / (row.latency_ms / 1e3) : 0;
    row.compute_bound = r.view_totals().compute_bound;
    row.memory_bound = r.view_totals().memory_bound;
    row.overhead_bound = r.view_totals().overhead_bound;
    row.memory_bytes = fp.weights_bytes + fp.peak_activation_bytes + workspace_bytes;
    row.fits = d->memory_gb <= 0 || row.memory_bytes <= d->memory_bytes();
    row.cost_per_million_usd = cost_per_million(d->price_per_hour_usd, row.throughput_per_s);
    row.verdict = r.verdict;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace modelcost
