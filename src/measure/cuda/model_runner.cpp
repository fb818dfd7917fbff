// The whole model on the GPU: every tensor gets its own buffer (reshape-like nodes alias their
// input), every node its runner, prepared up front; then one pass over the nodes in topological
// order is captured into a CUDA graph and its replays are timed with CUDA events, the way a
// deployment replays a captured graph.
#include "measure/cuda/cuda_backend.h"
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/graph_replay.h"
#include "measure/cuda/tensor_transfer.h"
#include "measure/sampling.h"
#include "measure/cuda/wall_ledger.h"

#include <optional>

namespace modelcost::cuda {
namespace {

bool aliases_input(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Dropout";
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
    std::optional<LedgerScope> preparing(std::in_place, "as-written: buffers and runners prepared (timed choices included)");
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
    preparing.reset();
    LedgerScope replaying("as-written: whole-model graph");
    const std::string method = result.method;
    result = time_graph_replays(
                 [&](cudaStream_t s) {
                   for (auto& r : runners) r->launch(s);
                 },
                 context_.stream, options, options.cold ? &l2_flush() : nullptr)
                 .timing;
    result.method = method;
  } catch (const Error& e) {
    cudaGetLastError();
    cudaStreamSynchronize(context_.stream);
    result.measured = false;
    result.reason = e.what();
  }
  return result;
}

}  // namespace modelcost::cuda
