#include "deployed/graph_pass.h"

#include "core/tensor_transfer.h"

#include "ops/op_registry.h"

namespace modelcost::cuda {

void* GraphPass::allocate(const TensorSpec& spec) {
  owned_.emplace_back(std::max<size_t>(static_cast<size_t>(spec.elements() * dtype_size(spec.dtype)), 16));
  return owned_.back().data();
}

// Reshape-like outputs alias their input; other outputs of nodes that run nothing get a buffer,
// with their known values uploaded.
void GraphPass::place_zero_cost_outputs(const NodeSpec& spec, const std::vector<DeviceTensor>& in,
                                        std::vector<void*>& pointer, CudaContext& context) {
  for (size_t o = 0; o < spec.node->outputs.size(); ++o) {
    const int id = spec.node->outputs[o];
    if (id < 0) continue;
    if (o == 0 && op_traits(spec.node->domain, spec.op_type).view && !in.empty() && in[0].data) {
      pointer[id] = in[0].data;
      continue;
    }
    const TensorSpec& t = spec.outputs[o];
    pointer[id] = allocate(t);
    if (t.value && t.value->size() == static_cast<size_t>(t.elements())) {
      HostTensor h(t.shape, t.dtype);
      for (size_t k = 0; k < h.data.size(); ++k) h.data[k] = static_cast<float>(t.value->as_double(k));
      upload(h, pointer[id], context.stream);
    }
  }
}

std::string GraphPass::prepare(const std::vector<NodeAnalysis>& nodes, std::vector<void*>& pointer, CudaContext& context) {
  for (const NodeAnalysis& n : nodes) {
    const Node& node = *n.node;
    if (!n.shaped) return "node '" + node.name + "' has no concrete shapes";
    const NodeSpec spec = make_node_spec(n, context.dtype_option);
    const OpPlan plan = plan_operation(spec);
    std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int id = node.inputs[i];
      in[i].spec = spec.inputs[i];
      if (id < 0) continue;
      if (!pointer[id]) {  // graph input or weight: random (or known) contents
        pointer[id] = allocate(spec.inputs[i]);
        fill_input(spec, plan, i, pointer[id], static_cast<uint64_t>(id), context.stream);
      }
      in[i].data = pointer[id];
    }
    if (is_zero_cost(plan)) {
      place_zero_cost_outputs(spec, in, pointer, context);
      continue;
    }
    std::string reason;
    const auto* branch = std::get_if<BranchPlan>(&plan);
    auto runner = branch ? make_branch_runner(spec, *branch, &pointer, &reason) : make_runner(spec, plan, &reason);
    if (!runner) return "node '" + node.name + "': " + reason;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      out[o].spec = spec.outputs[o];
      const int id = node.outputs[o];
      if (id < 0) continue;
      pointer[id] = allocate(spec.outputs[o]);
      out[o].data = pointer[id];
    }
    runner->prepare(in, out, context);
    runners_.push_back(std::move(runner));
  }
  return "";
}

void GraphPass::launch(cudaStream_t stream) {
  for (auto& r : runners_) r->launch(stream);
}

}  // namespace modelcost::cuda
