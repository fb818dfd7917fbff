// Where the wall time of `modelcost MODEL --measure` goes, and what a stopping rule costs in
// accuracy: runs the measure stage as the CLI does (every node, the whole model as written, then
// with --view deployed the fusion groups and their graph), prints the backend's wall breakdown,
// the idle per kernel of each whole-model replay, and the ratio of the wall time to a goal.
// With --compare it measures the nodes again under the spread rule and once more under the first
// rule, and prints how far the per-node medians moved (the repeat is the noise floor).
// Usage:
//   measure_wall MODEL [--batch N] [--dim NAME=V] [--dtype fp16] [--view as-written|deployed]
//                [--rule median-error|spread] [--noise X] [--goal SECONDS] [--compare] [--timeline FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "modelcost/fusion.h"
#include "modelcost/measure.h"
#include "shapes/shape_engine.h"

using namespace modelcost;

namespace {

struct Args {
  std::string path, view = "deployed", timeline;
  AnalysisOptions shapes;
  MeasureOptions options;
  double goal_seconds = 0;
  bool compare = false;
};

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Convergence parse_rule(const std::string& name) {
  if (name == "spread") return Convergence::kSpread;
  if (name == "median-error") return Convergence::kMedianError;
  throw Error(kExitUsage, "--rule median-error|spread, not " + name);
}

Args parse(int argc, char** argv) {
  Args a;
  for (const char* name : {"batch", "batch_size", "N", "n"}) a.shapes.dims[name] = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (s == "--batch") {
      const int64_t b = std::atoll(next().c_str());
      for (const char* name : {"batch", "batch_size", "N", "n"}) a.shapes.dims[name] = b;
    } else if (s == "--dim") {
      const std::string d = next();
      a.shapes.dims[d.substr(0, d.find('='))] = std::atoll(d.substr(d.find('=') + 1).c_str());
    } else if (s == "--dtype") a.options.dtype = next();
    else if (s == "--view") a.view = next();
    else if (s == "--rule") a.options.convergence = parse_rule(next());
    else if (s == "--noise") a.options.max_noise = std::atof(next().c_str());
    else if (s == "--goal") a.goal_seconds = std::atof(next().c_str());
    else if (s == "--compare") a.compare = true;
    else if (s == "--timeline") a.timeline = next();
    else a.path = s;
  }
  if (a.path.empty()) throw Error(kExitUsage, "usage: measure_wall MODEL [--batch N] [--rule R] [--compare] ...");
  return a;
}

// Idle per kernel of a replay: its median less the kernels' busy time, over the kernel count.
void print_replay(const char* view, const ModelMeasurement& m) {
  if (!m.measured) {
    std::printf("%s replay: not measured (%s)\n", view, m.reason.c_str());
    return;
  }
  std::printf("%s replay: %.1f us median (rsd %.2f%%, %d samples)", view, m.median_us, 100 * m.rel_stddev, m.samples);
  if (m.has_kernel_breakdown && m.kernels_per_run > 0)
    std::printf("; %d kernels busy %.1f us, span %.1f us; idle per kernel %.3f us", m.kernels_per_run, m.kernel_busy_us,
                m.kernel_span_us, (m.median_us - m.kernel_busy_us) / m.kernels_per_run);
  std::printf("\n");
}

void write_timeline(std::ofstream& out, const char* view, const ModelMeasurement& m) {
  double previous_end = 0;
  for (size_t k = 0; k < m.replay_kernels.size(); ++k) {
    const KernelInterval& i = m.replay_kernels[k];
    out << view << '\t' << k << '\t' << i.name << '\t' << i.start_us << '\t' << i.duration_us << '\t'
        << (k ? i.start_us - previous_end : 0.0) << '\n';
    previous_end = std::max(previous_end, i.start_us + i.duration_us);
  }
}

// How far `b`'s medians lie from `a`'s, node by node (measured, not reused, not zero-cost).
void print_moves(const char* label, const std::vector<NodeMeasurement>& a, const std::vector<NodeMeasurement>& b) {
  std::vector<double> moves;
  double sum_a = 0, sum_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].measured || !b[i].measured || a[i].zero_cost || a[i].median_us <= 0) continue;
    sum_a += a[i].median_us;
    sum_b += b[i].median_us;
    if (a[i].same_as.empty()) moves.push_back(std::fabs(b[i].median_us / a[i].median_us - 1));
  }
  if (moves.empty()) return;
  std::sort(moves.begin(), moves.end());
  std::printf("%s: %zu distinct nodes, |median moved| median %.2f%% p90 %.2f%% max %.2f%%; node sum %.1f -> %.1f us (%+.2f%%)\n",
              label, moves.size(), 100 * moves[moves.size() / 2], 100 * moves[moves.size() * 9 / 10], 100 * moves.back(),
              sum_a, sum_b, 100 * (sum_b / sum_a - 1));
}

void compare_rules(const Analysis& analysis, Backend& backend, const MeasureOptions& first,
                   const std::vector<NodeMeasurement>& nodes, double first_seconds) {
  MeasureOptions spread = first;
  spread.convergence = Convergence::kSpread;
  spread.max_noise = 0.005;
  auto t0 = std::chrono::steady_clock::now();
  const auto old_rule = measure_nodes(analysis, backend, spread);
  const double spread_seconds = since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto repeat = measure_nodes(analysis, backend, first);
  const double repeat_seconds = since(t0);
  std::printf("node pass: %.2f s under the rule asked for, %.2f s under the 0.5%% spread rule (ratio %.2f); repeat %.2f s\n",
              first_seconds, spread_seconds, first_seconds / spread_seconds, repeat_seconds);
  print_moves("rule asked for against the spread rule", old_rule, nodes);
  print_moves("spread rule against the rule repeated", old_rule, repeat);
  print_moves("rule asked for, repeated (noise floor)", nodes, repeat);
}

int run(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  auto backend = make_backend(false);
  const double backend_seconds = since(start);
  Model model = load_model(a.path);
  Analysis analysis = analyze(model, a.shapes);
  auto t0 = std::chrono::steady_clock::now();
  const auto nodes = measure_nodes(analysis, *backend, a.options);
  const double node_seconds = since(t0);
  t0 = std::chrono::steady_clock::now();
  const ModelMeasurement whole = measure_model(analysis, *backend, a.options, nodes);
  const double whole_seconds = since(t0);
  DeployedMeasurement deployed;
  double deployed_seconds = 0;
  if (a.view == "deployed") {
    t0 = std::chrono::steady_clock::now();
    deployed = backend->measure_deployed(analysis, fuse(analysis), a.options);
    deployed_seconds = since(t0);
  }
  const double total = since(start);
  std::printf("%s: backend %.2f s, nodes %.2f s, whole as written %.2f s, deployed %.2f s; total %.2f s",
              a.path.c_str(), backend_seconds, node_seconds, whole_seconds, deployed_seconds, total);
  if (a.goal_seconds > 0) std::printf(" (%.2fx the %.1f s goal)", total / a.goal_seconds, a.goal_seconds);
  std::printf("\nwall breakdown (phases nest):\n");
  for (const auto& [entry, value] : backend->wall_breakdown())
    std::printf("  %-72s %10.3f\n", entry.c_str(), value);
  print_replay("as-written", whole);
  if (a.view == "deployed") print_replay("deployed", deployed.whole);
  if (!a.timeline.empty()) {
    std::ofstream out(a.timeline);
    out << "view\tindex\tkernel\tstart_us\tduration_us\tgap_before_us\n";
    write_timeline(out, "as-written", whole);
    write_timeline(out, "deployed", deployed.whole);
  }
  if (a.compare) compare_rules(analysis, *backend, a.options, nodes, node_seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const Error& e) {
    std::fprintf(stderr, "measure_wall: error: %s\n", e.what());
    return e.code();
  }
}
