// The serving simulation at several rates (serve.h, simulate_rates): one workload's arrivals
// compressed or stretched in time, every other figure of it kept.
#include "modelcost/errors.h"
#include "serve/serve.h"

namespace modelcost {

double offered_rate(const std::vector<ServeRequest>& requests) {
  if (requests.size() < 2) return 0;
  const double span = requests.back().arrival_s - requests.front().arrival_s;
  return span > 0 ? static_cast<double>(requests.size() - 1) / span : 0;
}

std::vector<RatePoint> simulate_rates(const StepSetup& setup, const std::vector<ServeRequest>& requests,
                                      const SchedulerOptions& options, const std::vector<double>& factors) {
  const double rate = offered_rate(requests);
  if (!(rate > 0)) throw Error(kExitUsage, "serve: a rate sweep needs arrivals spread over time (two or more, not all at once)");
  const double start = requests.front().arrival_s;
  std::vector<RatePoint> points;
  for (double factor : factors) {
    std::vector<ServeRequest> scaled = requests;
    for (ServeRequest& r : scaled) r.arrival_s = start + (r.arrival_s - start) / factor;
    RatePoint point{rate * factor, simulate_serving(setup, scaled, options)};
    point.result.requests.clear();  // the percentiles and rates are what a sweep reports
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace modelcost
