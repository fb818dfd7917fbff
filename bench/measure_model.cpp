// Measures every node of a model with the measure stage's backends, without the CLI: a bench
// for the GPU machine. Usage:
//   measure_model MODEL [--batch N] [--dtype fp16] [--cold] [--autotune] [--cpu] [--seconds S] [--nodes]
//   measure_model --calibrate
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "modelcost/measure.h"
#include "ops/op_registry.h"
#include "shapes/shape_engine.h"

using namespace modelcost;

int main(int argc, char** argv) {
  std::string path;
  int64_t batch = 1;
  bool calibrate = false, print_nodes = false;
  MeasureOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--batch") batch = std::atoll(next().c_str());
    else if (a == "--dtype") options.dtype = next();
    else if (a == "--cold") options.cold = true;
    else if (a == "--autotune") options.autotune = true;
    else if (a == "--cpu") options.cpu = true;
    else if (a == "--seconds") options.max_seconds_per_node = std::atof(next().c_str());
    else if (a == "--calibrate") calibrate = true;
    else if (a == "--nodes") print_nodes = true;
    else path = a;
  }
  try {
    auto backend = make_backend(options.cpu);
    const DeviceInfo d = backend->device();
    std::printf("device: %s, %d SMs, %.0f MHz, L2 %.0f MiB, %.1f GiB, datasheet DRAM %.0f GB/s; %s\n", d.name.c_str(),
                d.multiprocessors, d.sm_clock_mhz, d.l2_bytes / 1048576.0, d.memory_bytes / 1073741824.0,
                d.datasheet_bandwidth_gbps, d.driver.c_str());
    if (calibrate) {
      const auto t0 = std::chrono::steady_clock::now();
      CalibrationResult r = backend->calibrate(options);
      // H100 SXM5 datasheet (dense): 3.35 TB/s, 67 TF fp32, 134 fp16 vector, 494.7 tf32, 989.4 fp16/bf16, 1978.9 fp8.
      std::printf("%s", format_calibration(r, {{"dram_gbps", 3352}, {"fp32_vector", 66.9}, {"fp16_vector", 133.8},
                                                {"tf32", 494.7}, {"fp16", 989.4}, {"bf16", 989.4}, {"fp8", 1978.9}})
                            .c_str());
      std::printf("--- hwdb entry ---\n%s", calibration_to_hwdb_toml(r, "local-calibrated").c_str());
      std::printf("calibrate took %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return 0;
    }
    Model model = load_model(path);
    AnalysisOptions shapes;
    for (const char* name : {"batch", "batch_size", "N", "n"}) shapes.dims[name] = batch;
    Analysis analysis = analyze(model, shapes);
    const auto t0 = std::chrono::steady_clock::now();
    auto nodes = measure_nodes(analysis, *backend, options);
    const double node_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    size_t measured = 0, zero = 0;
    std::map<std::string, double> by_op;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeMeasurement& m = nodes[i];
      const Node& node = *analysis.nodes[i].node;
      if (m.measured) ++measured;
      if (m.zero_cost) ++zero;
      by_op[node.op_type] += m.median_us;
      if (!m.measured) std::printf("NOT MEASURED %s (%s): %s\n", node.name.c_str(), node.op_type.c_str(), m.reason.c_str());
      if (print_nodes && m.measured && !m.zero_cost)
        std::printf("%-40s %-18s %9.2f us  min %8.2f  rsd %5.2f%%  n %4d  %s  [%s]\n", node.name.c_str(),
                    node.op_type.c_str(), m.median_us, m.min_us, 100 * m.rel_stddev, m.samples, m.implementation.c_str(),
                    m.kernels.empty() ? "" : m.kernels[0].c_str());
    }
    ModelMeasurement whole = measure_model(analysis, *backend, options, nodes);
    std::printf("per op type (sum of medians, us):");
    for (const auto& [op, us] : by_op)
      if (us > 0) std::printf(" %s %.1f", op.c_str(), us);
    std::printf("\n%s batch %lld %s: %zu nodes, %zu measured (%zu zero-cost), node pass %.1f s\n", path.c_str(),
                static_cast<long long>(batch), options.dtype.empty() ? "model dtype" : options.dtype.c_str(), nodes.size(),
                measured, zero, node_seconds);
    std::printf("sum of node medians %.1f us; whole model %s %.1f us (min %.1f, rsd %.2f%%, n %d); ratio sum/whole %.3f\n",
                whole.sum_of_node_medians_us, whole.measured ? "" : ("NOT MEASURED: " + whole.reason).c_str(),
                whole.median_us, whole.min_us, 100 * whole.rel_stddev, whole.samples,
                whole.median_us > 0 ? whole.sum_of_node_medians_us / whole.median_us : 0.0);
    std::printf("total wall %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } catch (const Error& e) {
    std::fprintf(stderr, "measure_model: error: %s\n", e.what());
    return e.code();
  }
  return 0;
}
