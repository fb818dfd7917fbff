// Printers of the configuration search (docs/llm.md, "Searching configurations").
#include <iomanip>

#include <nlohmann/json.hpp>

#include "report/number_format.h"
#include "report/serve_report.h"

namespace modelcost {
namespace {

constexpr size_t kRowsShown = 15;

// The columns that name a configuration, shared by both tables.
void print_configuration_header(std::ostream& out) {
  out << "  " << std::left << std::setw(24) << "device" << std::right << std::setw(4) << "TP" << std::setw(4) << "PP" << std::setw(7)
      << "batch" << std::setw(7) << "chunk";
}

void print_configuration(const SearchPoint& p, std::ostream& out) {
  out << "  " << std::left << std::setw(24) << p.device << std::right << std::setw(4) << p.tensor_parallel << std::setw(4)
      << p.pipeline_stages << std::setw(7) << p.max_batch << std::setw(7) << (p.chunk > 0 ? std::to_string(p.chunk) : "-");
}

void print_header(std::ostream& out) {
  print_configuration_header(out);
  out << std::setw(10) << "$/hour" << std::setw(12) << "requests/s" << std::setw(14) << "requests/$" << std::setw(12) << "P99 TTFT"
      << std::setw(11) << "P99 TPOT" << "\n";
}

void print_point(const SearchPoint& p, std::ostream& out) {
  print_configuration(p, out);
  out << std::setw(10) << three_digits(p.cost_per_hour) << std::setw(12) << three_digits(p.max_rate) << std::setw(14)
      << three_digits(p.requests_per_dollar) << std::setw(12) << three_digits(p.p99_ttft_ms) << std::setw(11)
      << three_digits(p.p99_tpot_ms) << "\n";
}

// The cheapest ways to serve the target rate: each configuration's replicas and their cost.
void print_target(const SearchOptions& o, const std::vector<SearchPoint>& points, std::ostream& out) {
  const std::vector<SearchPoint> cheapest = cheapest_for_target(points);
  out << "\nCheapest for " << three_digits(o.target_rate) << " requests/s (replicas behind a load balancer, each its share of the "
      << "arrivals)\n";
  if (cheapest.empty()) {
    out << "  no configuration meets the SLOs\n";
    return;
  }
  print_configuration_header(out);
  out << std::setw(10) << "replicas" << std::setw(9) << "GPUs" << std::setw(12) << "$/hour" << std::setw(14) << "rate/replica" << "\n";
  for (size_t i = 0; i < cheapest.size() && i < 5; ++i) {
    const SearchPoint& p = cheapest[i];
    print_configuration(p, out);
    out << std::setw(10) << p.replicas << std::setw(9) << p.replicas * p.tensor_parallel * p.pipeline_stages << std::setw(12)
        << three_digits(p.cost_for_target_per_hour) << std::setw(14) << three_digits(p.max_rate) << "\n";
  }
}

}  // namespace

void print_search(const ServeRunInfo& info, const SearchOptions& o, const std::vector<SearchPoint>& points, std::ostream& out) {
  out << "Search: " << info.model << ", scheduler " << scheduler_name(o.scheduler.kind) << "; " << info.workload << "\n";
  out << "  highest rate with P99 TTFT <= " << three_digits(o.ttft_slo_ms) << " ms and P99 TPOT <= " << three_digits(o.tpot_slo_ms)
      << " ms, " << points.size() << " configurations\n\n";
  size_t meeting = 0, skipped = 0;
  for (const SearchPoint& p : points) {
    meeting += p.max_rate > 0 ? 1 : 0;
    skipped += p.skipped.empty() ? 0 : 1;
  }
  if (meeting == 0) {
    out << "No configuration meets the SLOs" << (skipped ? " (" + std::to_string(skipped) + " do not fit or split)" : "") << ".\n";
    return;
  }
  out << "Best requests per dollar (" << std::min(meeting, kRowsShown) << " of " << meeting << " meeting the SLOs)\n";
  print_header(out);
  size_t shown = 0;
  for (const SearchPoint& p : points)
    if (p.max_rate > 0 && shown++ < kRowsShown) print_point(p, out);
  out << "\nPareto front (no other configuration serves more for no more per hour), by cost\n";
  print_header(out);
  std::vector<SearchPoint> front;
  for (const SearchPoint& p : points)
    if (p.pareto) front.push_back(p);
  std::stable_sort(front.begin(), front.end(), [](const SearchPoint& a, const SearchPoint& b) { return a.cost_per_hour < b.cost_per_hour; });
  for (const SearchPoint& p : front) print_point(p, out);
  if (o.target_rate > 0) print_target(o, points, out);
  if (skipped) out << "\n" << skipped << " configurations were not simulated (the model does not fit, the heads do not split, or the devices span nodes without network figures); see --json\n";
}

void write_search_json(const SearchOptions& o, const std::vector<SearchPoint>& points, std::ostream& out) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SearchPoint& p : points)
    rows.push_back({{"device", p.device}, {"tensor_parallel", p.tensor_parallel}, {"pipeline_stages", p.pipeline_stages}, {"max_batch", p.max_batch}, {"chunk", p.chunk},
                    {"cost_per_hour", p.cost_per_hour}, {"max_rate", p.max_rate}, {"requests_per_dollar", p.requests_per_dollar},
                    {"p99_ttft_ms", p.p99_ttft_ms}, {"p99_tpot_ms", p.p99_tpot_ms}, {"pareto", p.pareto}, {"skipped", p.skipped},
                    {"replicas", p.replicas}, {"cost_for_target_per_hour", p.cost_for_target_per_hour}});
  const nlohmann::json search = {{"scheduler", scheduler_name(o.scheduler.kind)}, {"ttft_slo_ms", o.ttft_slo_ms},
                                 {"tpot_slo_ms", o.tpot_slo_ms}, {"requests", o.workload.requests},
                                 {"target_rate", o.target_rate}, {"configurations", rows}};
  out << nlohmann::json{{"search", search}}.dump(2) << "\n";
}

}  // namespace modelcost
