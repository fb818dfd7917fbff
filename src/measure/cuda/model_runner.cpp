// The whole model on the GPU: every tensor gets its own buffer (reshape-like nodes alias their
// input), every node its runner, prepared up front; then one pass over the nodes in topological
// order is captured into a CUDA graph and its replays are timed with CUDA events, the way a
// deployment replays a captured graph.
#include "measure/cuda/cuda_backend.h"
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/cupti_timer.h"
#include "measure/cuda/sampler.h"
#include "measure/cuda/tensor_transfer.h"
#include "measure/sampling.h"
#include "measure/statistics.h"

namespace modelcost::cuda {
namespace {

bool aliases_input(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Dropout";
}

struct GraphExec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~GraphExec() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

// Kernel count, busy time and span of one replay, from CUPTI records of 11 more replays (their
// kernels carry the graph launch's external id); medians. Skipped without CUPTI.
void add_kernel_breakdown(ModelMeasurement& result, cudaGraphExec_t exec, cudaStream_t stream) {
  CuptiTimer& timer = CuptiTimer::instance();
  if (!timer.ok()) return;
  timer.collect();
  std::vector<uint64_t> ids;
  for (int i = 0; i < 11; ++i) {
    ids.push_back(next_external_id());
    timer.push(ids.back());
    MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    timer.pop();
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  auto spans = timer.collect();
  std::vector<double> busy, span, count;
  for (uint64_t id : ids) {
    auto it = spans.find(id);
    if (it == spans.end()) return;
    busy.push_back(it->second.kernel_ns / 1e3);
    span.push_back((it->second.last_end - it->second.first_start) / 1e3);
    count.push_back(static_cast<double>(it->second.names.size()));
  }
  result.has_kernel_breakdown = true;
  result.kernel_busy_us = summarize(busy).median;
  result.kernel_span_us = summarize(span).median;
  result.kernels_per_run = static_cast<int>(summarize(count).median);
}

}  // namespace

ModelMeasurement CudaBackend::measure_model(const Analysis& analysis, const MeasureOptions& options) {
  ModelMeasurement result;
  result.method = "CUDA graph replay of all nodes in topological order, CUDA events";
  if (!analysis.graph) {
    result.reason = "no model";
    return result;
  }
  const Graph& graph = *analysis.graph;
  std::vector<DeviceBuffer> owned;
  std::vector<void*> pointer(graph.tensors.size(), nullptr);
  std::vector<std::unique_ptr<OperatorRunner>> runners;
  context_.autotune = options.autotune;
  context_.channels_last_half = true;
  try {
    auto allocate = [&](int id, const TensorSpec& spec) {
      owned.emplace_back(std::max<size_t>(static_cast<size_t>(spec.elements() * dtype_size(spec.dtype)), 16));
      pointer[id] = owned.back().data();
    };
    for (const NodeAnalysis& n : analysis.nodes) {
      const Node& node = *n.node;
      if (!n.shaped) {
        result.reason = "node '" + node.name + "' has no concrete shapes";
        return result;
      }
      const NodeSpec spec = make_node_spec(n, options.dtype);
      const OpPlan plan = plan_operation(spec);
      std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const int id = node.inputs[i];
        in[i].spec = spec.inputs[i];
        if (id < 0) continue;
        if (!pointer[id]) {  // graph input or weight: random (or known) contents
          allocate(id, spec.inputs[i]);
          fill_input(spec, plan, i, pointer[id], static_cast<uint64_t>(id), context_.stream);
        }
        in[i].data = pointer[id];
      }
      if (is_zero_cost(plan)) {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          const int id = node.outputs[o];
          if (id < 0) continue;
          if (o == 0 && aliases_input(node.op_type) && !in.empty() && in[0].data) {
            pointer[id] = in[0].data;
          } else {
            allocate(id, spec.outputs[o]);
            const TensorSpec& t = spec.outputs[o];
            if (t.value && t.value->size() == static_cast<size_t>(t.elements())) {
              HostTensor h(t.shape, t.dtype);
              for (size_t k = 0; k < h.data.size(); ++k) h.data[k] = static_cast<float>(t.value->as_double(k));
              upload(h, pointer[id], context_.stream);
            }
          }
        }
        continue;
      }
      std::string reason;
      auto runner = make_runner(spec, plan, &reason);
      if (!runner) {
        result.reason = "node '" + node.name + "': " + reason;
        return result;
      }
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        out[o].spec = spec.outputs[o];
        const int id = node.outputs[o];
        if (id < 0) continue;
        allocate(id, spec.outputs[o]);
        out[o].data = pointer[id];
      }
      runner->prepare(in, out, context_);
      runners.push_back(std::move(runner));
    }
    MC_CUDA_CHECK(cudaStreamSynchronize(context_.stream));

    GraphExec captured;
    MC_CUDA_CHECK(cudaStreamBeginCapture(context_.stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (auto& r : runners) r->launch(context_.stream);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(context_.stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    MC_CUDA_CHECK(cudaStreamEndCapture(context_.stream, &captured.graph));
    MC_CUDA_CHECK(cudaGraphInstantiate(&captured.exec, captured.graph, 0));

    for (int i = 0; i < 3; ++i) MC_CUDA_CHECK(cudaGraphLaunch(captured.exec, context_.stream));
    MC_CUDA_CHECK(cudaStreamSynchronize(context_.stream));
    SampleConfig replays;
    replays.rule.min_samples = std::max(options.min_samples, 20);
    replays.rule.max_rel_stddev = options.max_rel_stddev;
    replays.rule.max_seconds = std::max(2.0, options.max_seconds_per_node);
    replays.cold = options.cold;
    const NodeMeasurement m = sample_with_events(
        [&](cudaStream_t s) { MC_CUDA_CHECK(cudaGraphLaunch(captured.exec, s)); }, context_.stream, replays,
        options.cold ? &l2_flush() : nullptr);
    set_model_timing(result, m);
    add_kernel_breakdown(result, captured.exec, context_.stream);
  } catch (const Error& e) {
    cudaGetLastError();
    cudaStreamSynchronize(context_.stream);
    result.measured = false;
    result.reason = e.what();
  }
  return result;
}

}  // namespace modelcost::cuda
