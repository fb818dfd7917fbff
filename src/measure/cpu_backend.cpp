#include "measure/cpu_backend.h"

#include <Eigen/Core>
#include <fstream>
#include <thread>

#include "measure/cpu_reference.h"
#include "measure/sampling.h"

namespace modelcost {
namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "CPU";
}

// Samples fn until the stopping rule says so; returns the summary in microseconds.
template <typename Fn>
NodeMeasurement time_samples(const MeasureOptions& options, Fn fn) {
  fn();  // warm-up: first touch of the buffers, caches
  StoppingCriterion criterion({options.min_samples, options.max_noise, options.max_seconds_per_node, 100000, options.convergence});
  sample_until_done(criterion, [&] {
    const auto t0 = SteadyClock::now();
    fn();
    return seconds_since(t0) * 1e6;
  });
  return measurement_of(criterion.samples());
}

class CpuBackend : public Backend {
 public:
  DeviceInfo device() const override {
    DeviceInfo d;
    d.name = cpu_model_name();
    d.multiprocessors = static_cast<int>(std::thread::hardware_concurrency());
    d.driver = "CPU reference kernels (Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
               std::to_string(EIGEN_MAJOR_VERSION) + ")";
    return d;
  }

  NodeMeasurement measure_node(const NodeAnalysis& node, const MeasureOptions& options) override {
    NodeMeasurement m;
    if (!node.shaped) {
      m.reason = "shapes not concrete";
      return m;
    }
    try {
      const NodeSpec spec = make_node_spec(node, options.dtype);
      const OpPlan plan = plan_operation(spec);
      if (is_zero_cost(plan)) return zero_cost(plan_reason(plan));
      if (is_unsupported(plan)) {
        m.reason = plan_reason(plan);
        return m;
      }
      std::vector<HostTensor> inputs;
      for (size_t i = 0; i < spec.inputs.size(); ++i) inputs.push_back(random_input(spec, plan, i, 1));
      std::vector<const HostTensor*> in;
      for (size_t i = 0; i < spec.inputs.size(); ++i) in.push_back(spec.has_input(i) ? &inputs[i] : nullptr);
      std::vector<HostTensor> outputs = make_outputs(spec);
      m = time_samples(options, [&] { run_cpu_reference(spec, plan, in, outputs); });
      m.implementation = "cpu reference";
      m.kernels = {"cpu_" + spec.op_type};
    } catch (const std::exception& e) {
      m = NodeMeasurement();
      m.reason = e.what();
    }
    return m;
  }

  ModelMeasurement measure_model(const Analysis& analysis, const MeasureOptions& options) override {
    ModelMeasurement result;
    result.method = "cpu reference kernels in topological order, steady clock";
    if (!analysis.graph) {
      result.reason = "no model";
      return result;
    }
    struct Step { NodeSpec spec; OpPlan plan; const Node* node; };
    std::vector<Step> steps;
    const Graph& graph = *analysis.graph;
    std::vector<HostTensor> tensors(graph.tensors.size());
    for (const auto& n : analysis.nodes) {
      if (!n.shaped) { result.reason = "node '" + n.node->name + "' has no concrete shapes"; return result; }
      Step step{make_node_spec(n, options.dtype), {}, n.node};
      step.plan = plan_operation(step.spec);
      if (is_unsupported(step.plan)) {
        result.reason = "node '" + n.node->name + "': " + plan_reason(step.plan);
        return result;
      }
      for (size_t i = 0; i < n.node->inputs.size(); ++i) {
        const int id = n.node->inputs[i];
        if (id >= 0 && tensors[id].shape.empty() && tensors[id].data.empty())
          tensors[id] = random_input(step.spec, step.plan, i, static_cast<uint64_t>(id));
      }
      for (size_t o = 0; o < n.node->outputs.size(); ++o) {
        const int id = n.node->outputs[o];
        if (id >= 0) tensors[id] = HostTensor(step.spec.outputs[o].shape, step.spec.outputs[o].dtype);
      }
      steps.push_back(std::move(step));
    }
    auto run_all = [&] {
      for (auto& step : steps) {
        if (is_zero_cost(step.plan)) continue;
        std::vector<const HostTensor*> in;
        for (int id : step.node->inputs) in.push_back(id >= 0 ? &tensors[id] : nullptr);
        std::vector<HostTensor> out;
        for (int id : step.node->outputs) out.push_back(id >= 0 ? std::move(tensors[id]) : HostTensor());
        run_cpu_reference(step.spec, step.plan, in, out);
        for (size_t o = 0; o < out.size(); ++o)
          if (step.node->outputs[o] >= 0) tensors[step.node->outputs[o]] = std::move(out[o]);
      }
    };
    MeasureOptions whole = options;
    whole.max_seconds_per_node = std::max(options.max_seconds_per_node, 1.0);
    set_model_timing(result, time_samples(whole, run_all));
    return result;
  }

  CalibrationResult calibrate(const MeasureOptions& options) override {
    CalibrationResult r;
    r.device = device();
    // Streaming copy of 256 MiB (read + write counted).
    const size_t count = 64u << 20;
    std::vector<float> src(count, 1.f), dst(count, 0.f);
    NodeMeasurement copy = time_samples(options, [&] { std::copy(src.begin(), src.end(), dst.begin()); });
    r.dram_gbps = 2.0 * count * sizeof(float) / (copy.median_us * 1e-6) / 1e9;
    r.notes.push_back("dram: std::copy of 256 MiB, one thread, read + write bytes");
    const int n = 1024;
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
    NodeMeasurement gemm = time_samples(options, [&] { c.noalias() = a * b; });
    r.fp32_vector_tflops = 2.0 * n * n * n / (gemm.median_us * 1e-6) / 1e12;
    r.notes.push_back("fp32: Eigen 1024^3 GEMM, one thread");
    return r;
  }

 private:
  static NodeMeasurement zero_cost(const std::string& why) {
    NodeMeasurement m;
    m.measured = true;
    m.zero_cost = true;
    m.reason = why;
    m.implementation = "none (0 us)";
    return m;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace modelcost
