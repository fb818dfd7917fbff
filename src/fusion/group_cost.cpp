// A group's FLOPs and the bytes crossing its boundary (docs/fusion.md): each member's own bytes,
// less the traffic of tensors that stay inside the kernel and the repeated reads of one input.
#include <algorithm>
#include <set>

#include "fusion/patterns.h"

namespace modelcost::fusion {
namespace {

// Does any node outside the group (or the graph's output) read tensor `id`, directly or through
// reinterpreting nodes (a Reshape of it that an outside node reads)?
bool read_outside(const FusionGraph& g, const std::vector<size_t>& members, int id, int depth = 0) {
  // A result nothing reads is still written (an output the file does not declare).
  if (g.is_graph_output(id) || !g.has_readers(id) || depth > 32) return true;
  for (size_t c : g.consumers(id)) {
    if (!contains(members, c)) return true;
    if (g.is_alias(c))
      for (int out : g.node(c).outputs)
        if (out >= 0 && read_outside(g, members, out, depth + 1)) return true;
  }
  return false;
}

// Does a member really write `root` (not only reinterpret it)?
bool written_inside(const FusionGraph& g, const std::vector<size_t>& members, int root) {
  const int p = g.producer(root);
  return p >= 0 && contains(members, size_t(p)) && !g.is_alias(size_t(p));
}

}  // namespace

void boundary_cost(const FusionGraph& g, FusedGroup& group) {
  std::set<int> read_once;
  std::set<int> inputs, outputs;
  for (size_t m : group.members) {
    const NodeCost& c = g.cost(m);
    group.costed = group.costed && c.known;
    group.macs += c.macs;
    group.flops += c.flops;
    group.matrix = group.matrix || g.kind(m) == OpKind::kMatrix;
    if (g.is_alias(m)) continue;  // reinterprets its input: reads and writes nothing
    // Reads of tensors a member wrote, and second reads of one input, stay on chip.
    double saved_read = 0;
    for (int id : g.node(m).inputs) {
      if (id < 0) continue;
      const int root = g.alias_root(id);
      if (written_inside(g, group.members, root) || !read_once.insert(root).second) saved_read += g.tensor_bytes(id);
      else inputs.insert(root);
    }
    double saved_write = 0;
    for (int id : g.node(m).outputs) {
      if (id < 0) continue;
      if (!read_outside(g, group.members, id)) saved_write += g.tensor_bytes(id);
      else outputs.insert(id);
    }
    group.bytes_read += std::max(0.0, c.bytes_read - saved_read);
    group.bytes_written += std::max(0.0, c.bytes_written - saved_write);
  }
  group.inputs.assign(inputs.begin(), inputs.end());
  group.outputs.assign(outputs.begin(), outputs.end());
  group.launches = false;
  for (size_t m : group.members) group.launches = group.launches || (!g.is_idle(m) && (g.cost(m).flops > 0 || g.cost(m).bytes() > 0));
}

}  // namespace modelcost::fusion
