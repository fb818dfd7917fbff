#include "measure/op_plan.h"

#include <algorithm>

#include "measure/spec_graph.h"
#include "ops/op_registry.h"

namespace modelcost {
namespace {

UnsupportedPlan unsupported_plan(const std::string& why) { return UnsupportedPlan{why}; }

const OpRule* standard_rule(const std::string& op_type) { return OpRegistry::instance().find("", op_type); }

// Checks that hold for every op before its plan builder reads the node.
bool runs_nothing(const NodeSpec& s, OpPlan* plan) {
  for (const auto& t : s.outputs)
    if (t.present && element_count(t.shape) == 0) return *plan = ZeroCostPlan{"empty output"}, true;
  bool all_folded = !s.outputs.empty();
  for (const auto& t : s.outputs)
    if (t.present && !t.value) all_folded = false;
  if (all_folded) return *plan = ZeroCostPlan{"output folded at analysis time"}, true;
  return false;
}

}  // namespace

OpPlan plan_operation(const NodeSpec& s) {
  if (!s.graph || !s.node) {  // made up in code: its own one-node graph
    const SpecGraph own(s);
    NodeSpec read = s;
    read.graph = &own.graph();
    read.node = &own.node();
    return plan_operation(read);
  }
  OpPlan plan;
  if (runs_nothing(s, &plan)) return plan;
  const OpRule* rule = OpRegistry::instance().find(s.domain, s.op_type);
  if (!rule || !rule->measure.plan) {
    if (!is_standard_domain(s.domain)) return unsupported_plan("op of domain " + s.domain);
    const std::string gap = measurement_gap(s.op_type);
    return unsupported_plan(gap_is_named(s.op_type) ? s.op_type + ": " + gap : gap);
  }
  if (s.outputs.empty() || !s.outputs[0].present) return unsupported_plan("node without output");
  // A node with no inputs at all is an op that takes none (Constant: a weight-free copy's mask
  // tensor, its contents stripped, is still a buffer the graph reads); the loader refuses other
  // ops without their required inputs.
  if (!s.inputs.empty() && !s.has_input(0)) return unsupported_plan("node without its first input");
  try {
    Diagnostics ignored;
    const OpContext context = OpContext::reading(*s.graph, *s.node, ignored);
    return rule->measure.plan(context);
  } catch (const std::exception& e) {  // a value the builder needs is unknown, or the node is malformed
    return unsupported_plan(e.what());
  }
}

std::string measurement_gap(const std::string& op_type) {
  const OpRule* rule = standard_rule(op_type);
  if (rule && rule->measure.plan) return "";
  if (rule && !rule->measure.reason.empty()) return std::string(rule->measure.reason);
  return "no measurement kernel for " + op_type;
}

bool gap_is_named(const std::string& op_type) {
  const OpRule* rule = standard_rule(op_type);
  return rule && !rule->measure.plan && !rule->measure.reason.empty();
}

InputRange input_range(const NodeSpec& spec, const OpPlan& plan, size_t index) {
  InputRange r;
  if (spec.in(index).dtype == 9) r.int_range = 2;  // bool
  std::visit(Overloaded{
                 [&](const ElementwisePlan& e) {
                   using Op = ElementwiseOp;
                   const bool positive = e.op == Op::kLog || e.op == Op::kSqrt || e.op == Op::kReciprocal ||
                                         (e.op == Op::kPow && index == 0) || e.op == Op::kMod || e.op == Op::kFMod;
                   if (positive) r.lo = 0.1f;
                   if (e.op == Op::kAcosh) { r.lo = 1.f; r.hi = 2.f; }
                   if ((e.op == Op::kMod || e.op == Op::kFMod) && index == 1) r.int_range = 3;
                 },
                 [&](const BatchNormPlan&) { if (index == 4) r.lo = 0.1f; },  // a variance
                 [&](const ReducePlan& p) { if (p.op == ReduceOp::kLogSum) r.lo = 0.1f; },
                 [&](const GatherPlan& g) { r.int_range = g.axis_len; },
                 [&](const IndexedPlan& p) { if (index == 1) r.int_range = p.smallest_indexed_dim(); },
                 [&](const RangePlan&) { r.lo = 0; r.hi = 1; r.int_range = 1; },
                 // ROI corners anywhere on the map (in input pixels), batch indices within the batch.
                 [&](const RoiAlignPlan& p) {
                   if (index == 1) { r.lo = 0; r.hi = static_cast<float>(std::min(p.height, p.width)) / p.spatial_scale; }
                   if (index == 2) r.int_range = spec.in(0).shape.empty() ? 1 : spec.in(0).shape[0];
                 },
                 // Quantized data spread over the 7 bits int8 and uint8 share; scales positive.
                 [&](const QuantizePlan&) {
                   if (index == 0) r.int_range = 128;
                   if (index == 1) { r.lo = 0.01f; r.hi = 0.02f; }
                 },
                 [&](const IntegerMatMulPlan& p) {
                   const int i = static_cast<int>(index);
                   if (i == p.a || i == p.b) r.int_range = 128;
                   if (i == p.a_scale || i == p.b_scale) { r.lo = 0.01f; r.hi = 0.02f; }
                   if (i == p.y_scale) { r.lo = 0.5f; r.hi = 1.f; }
                 },
                 [&](const QLinearConvPlan&) {
                   if (index == 0 || index == 3) r.int_range = 128;
                   if (index == 1 || index == 4) { r.lo = 0.01f; r.hi = 0.02f; }
                   if (index == 6) { r.lo = 0.5f; r.hi = 1.f; }
                 },
                 [&](const auto&) {},
             },
             plan);
  return r;
}

}  // namespace modelcost
