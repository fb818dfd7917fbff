// Requests of a serving run: Poisson arrivals or a trace file; schedulers by name; percentiles.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "modelcost/errors.h"
#include "serve/serve.h"

namespace modelcost {
namespace {

int64_t draw_length(const LengthRange& range, std::mt19937_64& rng) {
  if (range.low == range.high) return range.low;
  return std::uniform_int_distribution<int64_t>(range.low, range.high)(rng);
}

void check_request(const std::string& where, const ServeRequest& r) {
  if (!std::isfinite(r.arrival_s) || r.arrival_s < 0)
    throw Error(kExitUsage, where + ": arrival_s must be a finite time of at least 0");
  if (r.prompt < 1 || r.output < 1 || r.prompt > (1 << 24) || r.output > (1 << 24))
    throw Error(kExitUsage, where + ": prompt_len and output_len must be between 1 and 16777216");
}

ServeRequest csv_request(const std::string& line, const std::string& where) {
  std::istringstream fields(line);
  ServeRequest r;
  char comma1 = 0, comma2 = 0;
  if (!(fields >> r.arrival_s >> comma1 >> r.prompt >> comma2 >> r.output) || comma1 != ',' || comma2 != ',')
    throw Error(kExitUsage, where + ": expected arrival_s,prompt_len,output_len");
  return r;
}

ServeRequest jsonl_request(const std::string& line, const std::string& where) {
  const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
  if (!object.is_object() || !object.contains("arrival_s") || !object.contains("prompt_len") || !object.contains("output_len") ||
      !object["arrival_s"].is_number() || !object["prompt_len"].is_number_integer() || !object["output_len"].is_number_integer())
    throw Error(kExitUsage, where + ": expected {\"arrival_s\": ..., \"prompt_len\": ..., \"output_len\": ...}");
  ServeRequest r;
  r.arrival_s = object["arrival_s"].get<double>();
  r.prompt = object["prompt_len"].get<int64_t>();
  r.output = object["output_len"].get<int64_t>();
  return r;
}

}  // namespace

std::vector<ServeRequest> poisson_workload(const WorkloadOptions& o) {
  if (!std::isfinite(o.rate) || o.rate <= 0) throw Error(kExitUsage, "--rate must be a finite number above 0");
  if (o.requests < 1 || o.requests > kMaxServeRequests)
    throw Error(kExitUsage, "--requests must be between 1 and " + std::to_string(kMaxServeRequests));
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.rate);
  std::vector<ServeRequest> requests;
  requests.reserve(static_cast<size_t>(o.requests));
  double now = 0;
  for (int64_t i = 0; i < o.requests; ++i) {
    ServeRequest r;
    r.arrival_s = now;
    r.prompt = draw_length(o.prompt, rng);
    r.output = draw_length(o.output, rng);
    requests.push_back(r);
    now += gap(rng);
  }
  return requests;
}

std::vector<ServeRequest> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(kExitUnreadable, path + ": cannot read the trace");
  std::vector<ServeRequest> requests;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    if (line.rfind("arrival_s", 0) == 0) continue;  // the CSV header
    const bool json = line[line.find_first_not_of(" \t")] == '{';
    const ServeRequest r = json ? jsonl_request(line, where) : csv_request(line, where);
    check_request(where, r);
    requests.push_back(r);
    if (static_cast<int64_t>(requests.size()) > kMaxServeRequests)
      throw Error(kExitUsage, path + ": more than " + std::to_string(kMaxServeRequests) + " requests");
  }
  if (requests.empty()) throw Error(kExitUsage, path + ": the trace holds no requests");
  std::stable_sort(requests.begin(), requests.end(), [](const ServeRequest& a, const ServeRequest& b) { return a.arrival_s < b.arrival_s; });
  return requests;
}

SchedulerKind parse_scheduler(const std::string& name) {
  if (name == "static") return SchedulerKind::kStatic;
  if (name == "continuous") return SchedulerKind::kContinuous;
  if (name == "chunked") return SchedulerKind::kChunked;
  throw Error(kExitUsage, "--scheduler '" + name + "': expected static, continuous or chunked");
}

std::string scheduler_name(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::kStatic: return "static";
    case SchedulerKind::kContinuous: return "continuous";
    case SchedulerKind::kChunked: return "chunked";
  }
  return "continuous";
}

// Nearest-rank percentiles.
Percentiles percentiles_of(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    const auto i = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(i, 1, values.size()) - 1];
  };
  p.p50 = rank(0.5);
  p.p90 = rank(0.9);
  p.p99 = rank(0.99);
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  return p;
}

}  // namespace modelcost
