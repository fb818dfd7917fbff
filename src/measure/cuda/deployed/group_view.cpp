// The group view's lookups, and the choice of a group's strategy.
#include <algorithm>

#include "deployed/group_runner.h"

#include "ops/op_registry.h"

namespace modelcost::cuda {

int GroupView::producer(int tensor) const {
  if (tensor < 0) return -1;
  for (size_t m : group.members)
    for (int out : node(m).outputs)
      if (out == tensor) return static_cast<int>(m);
  return -1;
}

std::vector<size_t> GroupView::consumers(int tensor) const {
  std::vector<size_t> found;
  for (size_t m : group.members)
    if (std::count(node(m).inputs.begin(), node(m).inputs.end(), tensor)) found.push_back(m);
  return found;
}

bool GroupView::is_output(int tensor) const {
  return std::count(group.outputs.begin(), group.outputs.end(), tensor) > 0;
}

namespace {
// Layout moves a runtime folds into the neighbouring kernel's operand layout (the fusion stage's
// layout folds), so a fused group does not run them.
bool is_layout_move(const Node& node) { return op_traits(node.domain, node.op_type).folds_into_operand(); }
}  // namespace

std::vector<size_t> GroupView::launching_members() const {
  std::vector<size_t> found, moves;
  for (size_t m : group.members)
    if (!is_zero_cost(plan(m))) (is_layout_move(node(m)) ? moves : found).push_back(m);
  return found.empty() ? moves : found;
}

std::vector<size_t> GroupView::running_members() const {
  std::vector<size_t> found;
  for (size_t m : group.members)
    if (!is_zero_cost(plan(m))) found.push_back(m);
  return found;
}

int GroupView::source(int tensor) const {
  for (int p = producer(tensor); p >= 0 && is_zero_cost(plan(p)) && !node(p).inputs.empty(); p = producer(tensor)) {
    if (buffers.data(node(p).inputs[0]) != buffers.data(tensor)) break;  // not an alias
    tensor = node(p).inputs[0];
  }
  return tensor;
}

int GroupView::view_source(int tensor) const {
  for (int p = producer(tensor); p >= 0; p = producer(tensor)) {
    if (node(p).inputs.empty() || !(is_zero_cost(plan(p)) || is_layout_move(node(p)))) break;
    tensor = node(p).inputs[0];
  }
  return tensor;
}

GroupKernelChoice make_group_kernel(const GroupView& view) {
  GroupKernelChoice choice;
  const std::vector<size_t> launching = view.launching_members();
  if (launching.empty() || !view.group.launches) return choice;
  std::string why;
  if (view.group.pattern == "attention") choice.kernel = make_attention_kernel(view, &why);
  if (view.group.pattern == "sibling_products") choice.kernel = make_sibling_products_kernel(view, &why);
  if (!choice.kernel) {
    std::string epilogue_why;
    choice.kernel = make_epilogue_kernel(view, &epilogue_why);
    if (!choice.kernel && why.empty()) why = epilogue_why;
  }
  if (!choice.kernel && launching.size() > 1) {
    std::string chain_why;
    choice.kernel = make_chain_kernel(view, launching, &chain_why);
    if (!choice.kernel) choice.kernel = make_row_program_kernel(view, launching, &chain_why);
    if (!choice.kernel && why.empty()) why = chain_why;
  }
  if (choice.kernel) {
    choice.fused = true;
    return choice;
  }
  // A lone kernel among layout moves runs alone (the moves fold into its operand layouts); a
  // lone elementwise op runs as its own generated chain where that is faster.
  const std::vector<size_t> running = launching.size() == 1 ? launching : view.running_members();
  choice.kernel = make_node_sequence(view, running);
  if (launching.size() == 1 && std::holds_alternative<ElementwisePlan>(view.plan(launching[0]))) {
    std::string chain_why;
    if (auto chain = make_chain_kernel(view, launching, &chain_why))
      choice.kernel = make_timed_choice(std::move(chain), std::move(choice.kernel), view.cuda,
                                        group_measurement_key(view, "lone elementwise op"));
  }
  // One running member is already one kernel: nothing fell back.
  choice.fused = running.size() == 1;
  if (!choice.fused) choice.fallback_reason = why;
  return choice;
}

}  // namespace modelcost::cuda
