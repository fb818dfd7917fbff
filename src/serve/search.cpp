#include "serve/search.h"

#include <algorithm>
#include <cmath>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

constexpr double kTrickleRate = 1e-3;  // requests/s: every request alone
constexpr double kHighestRate = 1e6;

struct Trial {
  bool meets = false;
  double p99_ttft_ms = 0, p99_tpot_ms = 0;
};

class RateSearch {
 public:
  RateSearch(const StepSetup& setup, const SearchOptions& options, const SchedulerOptions& scheduler)
      : setup_(setup), options_(options), scheduler_(scheduler) {}

  Trial at(double rate) const {
    WorkloadOptions workload = options_.workload;
    workload.rate = rate;
    const ServeResult r = simulate_serving(setup_, poisson_workload(workload), scheduler_);
    Trial t;
    t.p99_ttft_ms = r.ttft_ms.p99;
    t.p99_tpot_ms = r.tpot_ms.p99;
    t.meets = !r.saturated && r.ttft_ms.p99 <= options_.ttft_slo_ms && r.tpot_ms.p99 <= options_.tpot_slo_ms;
    return t;
  }

  // The highest rate that meets the SLOs: doubling to a rate that does not, then bisection.
  void find(SearchPoint& point) const {
    Trial best = at(kTrickleRate);
    if (!best.meets) return;
    double low = kTrickleRate, high = 1;
    for (Trial t = at(high); t.meets && high < kHighestRate; t = at(high)) {
      low = high;
      best = t;
      high *= 2;
    }
    for (int64_t step = 0; step < options_.bisection_steps; ++step) {
      const double middle = std::sqrt(low * high);  // geometric: the rates span decades
      const Trial t = at(middle);
      if (t.meets) {
        low = middle;
        best = t;
      } else {
        high = middle;
      }
    }
    point.max_rate = low;
    point.p99_ttft_ms = best.p99_ttft_ms;
    point.p99_tpot_ms = best.p99_tpot_ms;
  }

 private:
  const StepSetup& setup_;
  const SearchOptions& options_;
  SchedulerOptions scheduler_;
};

void check(const SearchOptions& o) {
  for (double slo : {o.ttft_slo_ms, o.tpot_slo_ms})
    if (!std::isfinite(slo) || slo <= 0) throw Error(kExitUsage, "--search needs --ttft-slo-ms and --tpot-slo-ms above 0");
  if (o.devices.empty()) throw Error(kExitUsage, "--search needs at least one --gpu");
  if (!std::isfinite(o.target_rate) || o.target_rate < 0) throw Error(kExitUsage, "--search: the target --rate must be above 0");
  for (const SearchDevice& d : o.devices)
    if (!std::isfinite(d.price_per_hour) || d.price_per_hour <= 0)
      throw Error(kExitUsage, "--search: no price for " + d.device->id + "; give --price-per-hour (one per --gpu device)");
}

void mark_pareto(std::vector<SearchPoint>& points) {
  for (SearchPoint& p : points) {
    if (p.max_rate <= 0) continue;
    p.pareto = std::none_of(points.begin(), points.end(), [&](const SearchPoint& q) {
      const bool no_worse = q.max_rate >= p.max_rate && q.cost_per_hour <= p.cost_per_hour;
      const bool better = q.max_rate > p.max_rate || q.cost_per_hour < p.cost_per_hour;
      return &q != &p && no_worse && better;
    });
  }
}

// One device and split, over the max batches and chunks.
void search_split(const DecoderModel& model, const SearchOptions& o, const SearchDevice& d, int64_t tp, int64_t pp,
                  std::vector<SearchPoint>& points) {
  LlmOptions step = o.step;
  step.tensor_parallel = tp;
  const bool chunked = o.scheduler.kind == SchedulerKind::kChunked;
  const std::vector<int64_t> chunks = chunked ? o.chunks : std::vector<int64_t>{o.scheduler.chunk};
  for (int64_t max_batch : o.max_batches)
    for (int64_t chunk : chunks) {
      SearchPoint point;
      point.device = d.device->id;
      point.tensor_parallel = tp;
      point.pipeline_stages = pp;
      point.max_batch = max_batch;
      point.chunk = chunked ? chunk : 0;
      point.cost_per_hour = d.price_per_hour * static_cast<double>(tp * pp);
      SchedulerOptions scheduler = o.scheduler;
      scheduler.max_batch = max_batch;
      scheduler.chunk = chunk;
      scheduler.pipeline_stages = pp;
      try {
        const StepSetup setup = make_step_setup(model, *d.device, step);
        RateSearch(setup, o, scheduler).find(point);
      } catch (const Error& e) {  // a split the heads refuse, or a cache that cannot hold a request
        point.skipped = e.what();
      }
      point.requests_per_dollar = point.max_rate * 3600 / point.cost_per_hour;
      if (o.target_rate > 0 && point.max_rate > 0) {
        point.replicas = static_cast<int64_t>(std::ceil(o.target_rate / point.max_rate - 1e-9));
        point.cost_for_target_per_hour = static_cast<double>(point.replicas) * point.cost_per_hour;
      }
      points.push_back(point);
    }
}

}  // namespace

std::vector<SearchPoint> search_configurations(const DecoderModel& model, const SearchOptions& o) {
  check(o);
  std::vector<SearchPoint> points;
  for (const SearchDevice& d : o.devices)
    for (int64_t tp : o.tensor_parallel)
      for (int64_t pp : o.pipeline_stages) search_split(model, o, d, tp, pp, points);
  mark_pareto(points);
  std::stable_sort(points.begin(), points.end(),
                   [](const SearchPoint& a, const SearchPoint& b) { return a.requests_per_dollar > b.requests_per_dollar; });
  return points;
}

std::vector<SearchPoint> cheapest_for_target(const std::vector<SearchPoint>& points) {
  std::vector<SearchPoint> serving;
  for (const SearchPoint& p : points)
    if (p.replicas > 0) serving.push_back(p);
  auto devices = [](const SearchPoint& p) { return p.replicas * p.tensor_parallel * p.pipeline_stages; };
  std::stable_sort(serving.begin(), serving.end(), [&](const SearchPoint& a, const SearchPoint& b) {
    return a.cost_for_target_per_hour != b.cost_for_target_per_hour ? a.cost_for_target_per_hour < b.cost_for_target_per_hour
                                                                      : devices(a) < devices(b);
  });
  return serving;
}

}  // namespace modelcost
