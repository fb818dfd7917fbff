#include "deployed/model_buffers.h"

#include "core/tensor_transfer.h"

#include "ops/op_registry.h"

namespace modelcost::cuda {

ModelBuffers::ModelBuffers(const Analysis& analysis, const std::string& dtype, cudaStream_t stream,
                           const std::vector<std::vector<int>>& adjacent)
    : analysis_(analysis),
      pointer_(analysis.graph->tensors.size(), nullptr),
      planned_(analysis.nodes.size()),
      adjacent_(adjacent),
      set_base_(adjacent.size(), nullptr) {
  for (size_t s = 0; s < adjacent.size(); ++s)
    for (size_t k = 0; k < adjacent[s].size(); ++k) slot_[adjacent[s][k]] = {s, k};
  for (size_t n = 0; n < analysis.nodes.size(); ++n) {
    const NodeAnalysis& na = analysis.nodes[n];
    const Node& node = *na.node;
    if (!na.shaped) throw Error(kExitRuntime, "node '" + node.name + "' has no concrete shapes");
    planned_[n] = PlannedNode{make_node_spec(na, dtype), {}};
    PlannedNode& p = *planned_[n];
    p.plan = plan_operation(p.spec);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int id = node.inputs[i];
      if (id < 0 || pointer_[id]) continue;
      allocate(id, p.spec.inputs[i]);  // graph input or weight: random (or known) contents
      fill_input(p.spec, p.plan, i, pointer_[id], static_cast<uint64_t>(id), stream);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int id = node.outputs[o];
      if (id < 0) continue;
      if (is_zero_cost(p.plan) && o == 0 && op_traits(node.domain, node.op_type).view && !node.inputs.empty() && node.inputs[0] >= 0) {
        pointer_[id] = pointer_[node.inputs[0]];
        continue;
      }
      if (!place_adjacent(id, p.spec.outputs[o])) allocate(id, p.spec.outputs[o]);
      const TensorSpec& t = p.spec.outputs[o];
      if (t.value && t.value->size() == static_cast<size_t>(t.elements())) {  // folded contents
        HostTensor h(t.shape, t.dtype);
        for (size_t k = 0; k < h.data.size(); ++k) h.data[k] = static_cast<float>(t.value->as_double(k));
        upload(h, pointer_[id], stream);
      }
    }
  }
}

void ModelBuffers::allocate(int tensor, const TensorSpec& spec) {
  owned_.emplace_back(std::max<size_t>(static_cast<size_t>(spec.elements() * dtype_size(spec.dtype)), 16));
  pointer_[tensor] = owned_.back().data();
}

bool ModelBuffers::place_adjacent(int tensor, const TensorSpec& spec) {
  const auto it = slot_.find(tensor);
  if (it == slot_.end()) return false;
  // The set's tensors have one shape (one batched call's results): each takes this one's bytes.
  const size_t bytes = static_cast<size_t>(spec.elements() * dtype_size(spec.dtype));
  char*& base = set_base_[it->second.set];
  if (!base) {
    owned_.emplace_back(std::max<size_t>(bytes * adjacent_[it->second.set].size(), 16));
    base = static_cast<char*>(owned_.back().data());
  }
  pointer_[tensor] = base + it->second.index * bytes;
  return true;
}

std::vector<DeviceTensor> ModelBuffers::inputs(size_t n) const {
  const Node& node = *analysis_.nodes[n].node;
  std::vector<DeviceTensor> in(node.inputs.size());
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].spec = planned_[n]->spec.inputs[i];
    in[i].data = data(node.inputs[i]);
  }
  return in;
}

std::vector<DeviceTensor> ModelBuffers::outputs(size_t n) const {
  const Node& node = *analysis_.nodes[n].node;
  std::vector<DeviceTensor> out(node.outputs.size());
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].spec = planned_[n]->spec.outputs[o];
    out[o].data = data(node.outputs[o]);
  }
  return out;
}

}  // namespace modelcost::cuda
