#include "deployed/model_buffers.h"

#include "core/tensor_transfer.h"

#include "ops/op_registry.h"

namespace modelcost::cuda {

ModelBuffers::ModelBuffers(const Analysis& analysis, const std::string& dtype, cudaStream_t stream,
                           const std::vector<std::vector<int>>& adjacent, const std::vector<HeldWithin>& held)
    : analysis_(analysis),
      pointer_(analysis.graph->tensors.size(), nullptr),
      planned_(analysis.nodes.size()),
      adjacent_(adjacent),
      set_base_(adjacent.size(), nullptr),
      spec_of_(analysis.graph->tensors.size(), nullptr) {
  for (size_t s = 0; s < adjacent.size(); ++s)
    for (size_t k = 0; k < adjacent[s].size(); ++k) slot_[adjacent[s][k]] = {s, k};
  for (const HeldWithin& h : held) held_[h.tensor] = h;
  // Every spec first: a held tensor's buffer may be that of a tensor written later.
  for (size_t n = 0; n < analysis.nodes.size(); ++n) {
    const NodeAnalysis& na = analysis.nodes[n];
    if (!na.shaped) throw Error(kExitRuntime, "node '" + na.node->name + "' has no concrete shapes");
    planned_[n] = PlannedNode{make_node_spec(na, dtype), {}};
    planned_[n]->plan = plan_operation(planned_[n]->spec);
    for (size_t o = 0; o < na.node->outputs.size(); ++o)
      if (na.node->outputs[o] >= 0) spec_of_[na.node->outputs[o]] = &planned_[n]->spec.outputs[o];
  }
  for (size_t n = 0; n < analysis.nodes.size(); ++n) {
    const Node& node = *analysis.nodes[n].node;
    const PlannedNode& p = *planned_[n];
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
      place(id);
      const TensorSpec& t = p.spec.outputs[o];
      if (t.value && t.value->size() == static_cast<size_t>(t.elements())) {  // folded contents
        HostTensor h(t.shape, t.dtype);
        for (size_t k = 0; k < h.data.size(); ++k) h.data[k] = static_cast<float>(t.value->as_double(k));
        upload(h, pointer_[id], stream);
      }
    }
  }
}

void ModelBuffers::place(int tensor) {
  if (pointer_[tensor]) return;
  if (!spec_of_[tensor]) throw Error(kExitRuntime, "the deployed view places a tensor no node writes");
  if (auto it = held_.find(tensor); it != held_.end()) {
    const HeldWithin& h = it->second;
    if (!pointer_[h.within]) place(h.within);  // a Concat's output, written later; a Slice's input is there
    const size_t element = dtype_size(spec_of_[tensor]->dtype);  // the two tensors' element type
    pointer_[tensor] = static_cast<char*>(pointer_[h.within]) + static_cast<size_t>(h.element_offset) * element;
    return;
  }
  if (!place_adjacent(tensor, *spec_of_[tensor])) allocate(tensor, *spec_of_[tensor]);
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

std::vector<std::vector<int>> adjacent_outputs(const Analysis& analysis, const FusionPlan& plan) {
  std::vector<std::vector<int>> sets;
  for (const FusedGroup& group : plan.groups)
    if (std::vector<int> outputs = sibling_outputs(group, analysis); !outputs.empty()) sets.push_back(std::move(outputs));
  return sets;
}

std::vector<HeldWithin> held_tensors(const Analysis& analysis, const FusionPlan& plan) {
  std::vector<HeldWithin> held;
  for (const FusedGroup& group : plan.groups)
    for (const HeldWithin& h : held_within(group, analysis)) held.push_back(h);
  return held;
}

}  // namespace modelcost::cuda
