// Memory footprint of one analysis: unique weights, and the peak of activation memory from tensor
// lifetimes over the topological node order (docs/roofline.md, "Memory").
#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_set>

#include "modelcost/plan.h"
#include "modelcost/roofline.h"
#include "ops/op_registry.h"

namespace modelcost {
namespace {

// Ops whose output is a view of their input's buffer in every runtime.
bool is_reinterpret(const Node& node) { return op_traits(node.domain, node.op_type).view; }

double tensor_bytes(const TensorInfo& t, const std::string& dtype_option) {
  if (!t.has_shape) return 0;
  return element_count(t.shape) * recast_element_size(t.dtype, dtype_option);
}

// Initializers every node (and subgraph body) reads, each counted once.
void collect_weights(const Graph& graph, const std::string& dtype_option, std::set<const void*>& seen, double& bytes) {
  auto visit = [&](int id) {
    if (id < 0 || id >= static_cast<int>(graph.tensors.size())) return;
    const TensorInfo& t = graph.tensors[id];
    if (!t.is_initializer) return;
    const void* key = t.initializer ? static_cast<const void*>(t.initializer) : static_cast<const void*>(&t);
    if (seen.insert(key).second) bytes += tensor_bytes(t, dtype_option);
  };
  for (const Node& node : graph.nodes) {
    for (int id : node.inputs) visit(id);
    for (int id : node.implicit_inputs) visit(id);
    for (const auto& sub : node.subgraphs) collect_weights(*sub.graph, dtype_option, seen, bytes);
  }
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
};

}  // namespace

MemoryFootprint memory_footprint(const Analysis& analysis, const std::string& dtype_option) {
  MemoryFootprint fp;
  const Graph* graph = analysis.graph ? analysis.graph.get() : (analysis.nodes.empty() ? nullptr : analysis.nodes[0].graph);
  if (!graph) return fp;
  const Graph& g = *graph;
  std::set<const void*> seen;
  collect_weights(g, dtype_option, seen, fp.weights_bytes);

  const size_t tensor_count = g.tensors.size();
  const size_t steps = analysis.nodes.size();
  if (steps == 0) return fp;
  constexpr int kNever = -1;
  std::vector<int> first(tensor_count, kNever), last(tensor_count, kNever);
  UnionFind buffers(tensor_count);

  for (int id : g.inputs)
    if (id >= 0 && !g.tensors[id].is_initializer) first[id] = last[id] = 0;
  for (size_t i = 0; i < steps; ++i) {
    const Node& node = *analysis.nodes[i].node;
    const int step = static_cast<int>(i);
    auto read = [&](int id) {
      if (id >= 0 && id < static_cast<int>(tensor_count)) last[id] = std::max(last[id], step);
    };
    for (int id : node.inputs) read(id);
    for (int id : node.implicit_inputs) read(id);
    for (int id : node.outputs) {
      if (id < 0) continue;
      if (first[id] == kNever) first[id] = step;
      last[id] = std::max(last[id], step);
    }
    // A view shares its input's buffer: the two lifetimes merge and the bytes count once.
    if (is_reinterpret(node) && !node.inputs.empty() && node.inputs[0] >= 0 && !node.outputs.empty() && node.outputs[0] >= 0)
      buffers.parent[buffers.find(node.outputs[0])] = buffers.find(node.inputs[0]);
  }
  for (int id : g.outputs)
    if (id >= 0) last[id] = static_cast<int>(steps) - 1;

  // Each buffer: the union of its tensors' lifetimes, the size of its root (the real allocation).
  std::vector<int> buffer_first(tensor_count, kNever), buffer_last(tensor_count, kNever);
  for (size_t id = 0; id < tensor_count; ++id) {
    if (first[id] == kNever) continue;
    const int root = buffers.find(static_cast<int>(id));
    buffer_first[root] = buffer_first[root] == kNever ? first[id] : std::min(buffer_first[root], first[id]);
    buffer_last[root] = std::max(buffer_last[root], last[id]);
  }
  std::vector<double> delta(steps + 1, 0);
  for (size_t root = 0; root < tensor_count; ++root) {
    if (buffer_first[root] == kNever || buffers.find(static_cast<int>(root)) != static_cast<int>(root)) continue;
    const TensorInfo& t = g.tensors[root];
    if (t.is_initializer) continue;  // a view of a weight: already in weights_bytes
    const double bytes = tensor_bytes(t, dtype_option);
    delta[buffer_first[root]] += bytes;
    delta[std::max(buffer_last[root], buffer_first[root]) + 1] -= bytes;
  }
  double live = 0;
  for (size_t i = 0; i < steps; ++i) {
    live += delta[i];
    if (live > fp.peak_activation_bytes) {
      fp.peak_activation_bytes = live;
      fp.peak_node = i;
    }
  }
  return fp;
}

}  // namespace modelcost
