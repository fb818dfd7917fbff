// Benchmark of the analyzer's speed, printed as ratios to its goals (a ratio <= 1 meets a time
// goal, >= 1 a throughput goal). From one run, medians of --repeat runs each:
//  1. whole processes: `modelcost GENERATED --json FILE` against Python's bare
//     `onnx.load(GENERATED, load_external_data=False)`; `modelcost resnet18_op13.onnx` against 20 ms;
//  2. the JSON and CSV writers on the generated graph's report, against 100 MB/s;
//  3. the analysis in process (load -> shapes -> costs) of the generated graph and of
//     tinyllama_1b_op18.onnx, next to onnx.load timed inside Python.
// GENERATED is a 20,000-node transformer-like graph (transformer_graph.h).
// Usage: analysis_speed [--nodes N] [--repeat R] [--model FILE]... [--binary MODELCOST]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "ops/op_registry.h"
#include "report/csv_writer.h"
#include "report/json_writer.h"
#include "report/report.h"
#include "shapes/shape_engine.h"
#include "transformer_graph.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  int nodes = 20000;
  int repeat = 7;
  std::vector<std::string> models;
  std::string binary = MODELCOST_BINARY;
};

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Wall time of one process from spawn to exit, output discarded; -1 when it fails.
double process_seconds(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto start = Clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double s = seconds_since(start);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

std::string python_with_onnx() {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (process_seconds({py, "-c", "import onnx"}) >= 0) return py;
  return "";
}

const modelcost::ShapeOptions& bench_dims() {
  static const modelcost::ShapeOptions options = [] {
    modelcost::ShapeOptions o;
    o.dims = {{"batch", 1}, {"seq", 128}};
    return o;
  }();
  return options;
}

struct InProcessRun {
  modelcost::Model model;
  modelcost::Analysis analysis;
  double seconds = 0;
};

std::unique_ptr<InProcessRun> analyse(const std::string& path) {
  auto run = std::make_unique<InProcessRun>();
  const auto start = Clock::now();
  run->model = modelcost::load_model(path);
  run->analysis = modelcost::analyze(run->model, bench_dims());
  run->seconds = seconds_since(start);
  if (run->analysis.totals.unshaped_nodes)
    std::fprintf(stderr, "warning: %zu unshaped nodes in %s\n", run->analysis.totals.unshaped_nodes, path.c_str());
  return run;
}

void print_ratio(const char* what, double measured_ms, double goal_ms, const char* goal) {
  if (measured_ms < 0 || goal_ms <= 0) return (void)std::printf("%-58s %10s\n", what, "n/a");
  std::printf("%-58s %8.1f ms  vs %8.1f ms  ratio %5.2f  (goal: %s)\n", what, measured_ms, goal_ms, measured_ms / goal_ms, goal);
}

// 1. Whole processes, alternated so both see the same machine load.
void process_ratios(const Settings& settings, const std::string& generated, const std::string& python) {
  char json[] = "/tmp/modelcost_bench_XXXXXX.json";
  const int fd = mkstemps(json, 5);
  if (fd >= 0) close(fd);
  const std::vector<std::string> ours = {settings.binary, generated, "--dim", "batch=1", "--dim", "seq=128", "-q", "--json", json};
  const std::vector<std::string> theirs = {python, "-c", "import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)", generated};
  const std::string resnet18 = std::string(MODELCOST_SOURCE_DIR) + "/../shared/models/resnet18_op13.onnx";
  std::vector<double> ours_s, theirs_s, resnet_s, version_s;
  for (int r = 0; r < settings.repeat; ++r) {
    ours_s.push_back(process_seconds(ours));
    if (!python.empty()) theirs_s.push_back(process_seconds(theirs));
    resnet_s.push_back(process_seconds({settings.binary, resnet18}));
    version_s.push_back(process_seconds({settings.binary, "--version"}));
  }
  std::remove(json);
  auto ms = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double s) { return s < 0; }) ? -1.0 : median(v) * 1e3;
  };
  std::printf("Processes (wall time from start to exit, median of %d)\n", settings.repeat);
  print_ratio("modelcost generated --json vs python onnx.load", ms(ours_s), python.empty() ? -1 : ms(theirs_s), "<= 1");
  print_ratio("modelcost resnet18_op13.onnx vs 20 ms", ms(resnet_s), 20, "<= 1");
  std::printf("%-58s %8.1f ms  (start-up and exit alone)\n", "modelcost --version", ms(version_s));
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// 2. Report writers on the generated graph's report. Throughput by CPU time (what the writer
// costs; on a busy machine wall time also counts the waits for a core), wall time beside it.
void writer_ratios(const Settings& settings, const InProcessRun& run) {
  const modelcost::Report report = modelcost::build_report(run.analysis, "bench");
  std::printf("\nReport writers on %zu nodes (median of %d)\n", run.analysis.nodes.size(), settings.repeat);
  auto time = [&](const char* what, std::string (*write)(const modelcost::Report&)) {
    std::vector<double> cpu, wall;
    size_t bytes = 0;
    for (int r = 0; r < settings.repeat; ++r) {
      const double cpu_start = thread_cpu_seconds();
      const auto start = Clock::now();
      bytes = write(report).size();
      wall.push_back(seconds_since(start));
      cpu.push_back(thread_cpu_seconds() - cpu_start);
    }
    const double mb_per_s = bytes / 1e6 / median(cpu);
    std::printf("%-5s %6.2f MB in %6.1f ms CPU (%6.1f ms wall) = %7.1f MB/s  ratio to 100 MB/s %5.2f  (goal: >= 1)\n", what,
                bytes / 1e6, median(cpu) * 1e3, median(wall) * 1e3, mb_per_s, mb_per_s / 100);
  };
  time("JSON", &modelcost::json_report_text);
  time("CSV", &modelcost::csv_report_text);
}

// 3. The analysis in process, next to onnx.load timed inside Python.
void in_process_table(const Settings& settings, const std::vector<std::string>& files, const std::string& python) {
  std::printf("\nIn process (median of %d)\n%-40s %8s %12s %12s %7s\n", settings.repeat, "model", "nodes", "analysis_ms",
              "py_load_ms", "ratio");
  for (const auto& f : files) {
    std::vector<double> ours, load;
    size_t nodes = 0;
    for (int r = 0; r < settings.repeat; ++r) {
      const auto run = analyse(f);
      ours.push_back(run->seconds);
      nodes = run->analysis.nodes.size();
      if (python.empty()) continue;
      const std::string cmd = python + " -c \"import onnx,time,sys; t=time.perf_counter(); onnx.load(sys.argv[1], "
                                       "load_external_data=False); print(time.perf_counter()-t)\" '" + f + "'";
      FILE* p = popen(cmd.c_str(), "r");
      double s = -1;
      if (p && std::fscanf(p, "%lf", &s) == 1) load.push_back(s);
      if (p) pclose(p);
    }
    const double a = median(ours) * 1e3, l = load.empty() ? -1 : median(load) * 1e3;
    std::printf("%-40s %8zu %12.1f %12.1f %7.2f\n", f.substr(f.rfind('/') + 1).c_str(), nodes, a, l, l > 0 ? a / l : 0.0);
  }
  std::printf("analysis = load + shapes + costs; py_load = onnx.load alone, timed inside Python\n");
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nodes") s.nodes = std::stoi(argv[++i]);
    else if (a == "--repeat") s.repeat = std::max(1, std::stoi(argv[++i]));
    else if (a == "--model") s.models.push_back(argv[++i]);
    else if (a == "--binary") s.binary = argv[++i];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  char generated[] = "/tmp/modelcost_bench_XXXXXX.onnx";
  const int fd = mkstemps(generated, 5);
  if (fd < 0) return 1;
  close(fd);
  std::ofstream(generated, std::ios::binary) << modelcost::bench::transformer_like(settings.nodes);
  std::vector<std::string> files = settings.models;
  if (files.empty()) files.push_back(std::string(MODELCOST_SOURCE_DIR) + "/../shared/models/tinyllama_1b_op18.onnx");
  files.insert(files.begin(), generated);
  const std::string python = python_with_onnx();
  if (python.empty()) std::fprintf(stderr, "no python3 with onnx: the Python comparisons are left out\n");

  process_ratios(settings, generated, python);
  writer_ratios(settings, *analyse(generated));
  in_process_table(settings, files, python);
  std::remove(generated);
  return 0;
}
