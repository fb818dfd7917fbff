// If: the branch the analyzer costs (BranchPlan), its nodes placed and run as a graph pass of
// their own; the branch's outputs are then copied into the If's outputs, as a runtime hands
// them over. The branch reads the enclosing graph's tensors where the caller gives their
// buffers (the whole-model replay), else copies of its own with random contents.
#include "core/cuda_check.h"
#include "deployed/graph_pass.h"

namespace modelcost::cuda {
namespace {

bool outputs_shaped(const Graph& graph, const Node& node) {
  for (int id : node.outputs)
    if (id >= 0 && !graph.tensors[id].has_shape) return false;
  return true;
}

class BranchRunner : public OperatorRunner {
 public:
  BranchRunner(const NodeSpec& spec, const BranchPlan& plan, const std::vector<void*>* outer)
      : spec_(spec), plan_(plan), body_(*spec.node->subgraphs[static_cast<size_t>(plan.subgraph)].graph) {
    if (outer) outer_ = *outer;
  }

  void prepare(const std::vector<DeviceTensor>&, const std::vector<DeviceTensor>& out, CudaContext& context) override {
    std::vector<void*> pointer(body_.tensors.size(), nullptr);
    for (const auto& [local, enclosing] : body_.outer_refs)
      if (enclosing >= 0 && static_cast<size_t>(enclosing) < outer_.size()) pointer[local] = outer_[enclosing];
    std::vector<NodeAnalysis> nodes;
    for (const Node& n : body_.nodes) {
      NodeAnalysis a;
      a.node = &n;
      a.graph = &body_;
      a.shaped = outputs_shaped(body_, n);
      nodes.push_back(a);
    }
    const std::string why = pass_.prepare(nodes, pointer, context);
    if (!why.empty()) throw Error(kExitRuntime, "If branch: " + why);
    for (size_t o = 0; o < out.size() && o < body_.outputs.size(); ++o) {
      const int id = body_.outputs[o];
      if (!out[o].data || !pointer[id]) continue;
      const double body_bytes = element_count(body_.tensors[id].shape) * dtype_size(out[o].spec.dtype);
      copies_.push_back({pointer[id], out[o].data, std::min(static_cast<size_t>(body_bytes), out[o].bytes())});
    }
  }

  void launch(cudaStream_t s) override {
    pass_.launch(s);
    for (const Copy& c : copies_)
      if (c.bytes) MC_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s));
  }

  std::string implementation() const override {
    return "If: " + plan_.why + "; " + std::to_string(pass_.runner_count()) + " of its " + std::to_string(body_.nodes.size()) +
           " nodes run kernels";
  }

 private:
  struct Copy {
    const void* src;
    void* dst;
    size_t bytes;
  };
  NodeSpec spec_;
  BranchPlan plan_;
  const Graph& body_;
  std::vector<void*> outer_;
  GraphPass pass_;
  std::vector<Copy> copies_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_branch_runner(const NodeSpec& spec, const BranchPlan& plan,
                                                   const std::vector<void*>* outer, std::string* reason) {
  if (!spec.node || plan.subgraph < 0 || static_cast<size_t>(plan.subgraph) >= spec.node->subgraphs.size()) {
    *reason = "If without the branch its plan names";
    return nullptr;
  }
  return std::make_unique<BranchRunner>(spec, plan, outer);
}

}  // namespace modelcost::cuda
