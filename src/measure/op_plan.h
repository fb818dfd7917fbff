// What a node computes, in the measured kind that runs it (ops/measured_kinds.h). The op rule
// table names each op's plan builder beside its shape and cost rules (ops/op_registry.h); here
// the measure stage reads a node through it. Every consumer dispatches over the closed sum type
// OpPlan with std::visit, so the compiler names any kind a consumer forgets.
#pragma once
#include <string>

#include "measure/node_spec.h"
#include "ops/measured_kinds.h"

namespace modelcost {

// The plan of a node: ZeroCost for nodes that run nothing (empty or folded outputs, aliases),
// Unsupported with the reason for a node measurement cannot run. The builder reads the node of
// the analysed graph make_node_spec names, or for a spec made up in code a one-node graph of it.
OpPlan plan_operation(const NodeSpec& spec);

// Standard op types: "" where the op rule names a plan builder (a node of it may still be
// Unsupported for its dtypes or attributes), else why it has none. gap_is_named: the op rule
// names the reason, rather than the default "no measurement kernel".
std::string measurement_gap(const std::string& op_type);
bool gap_is_named(const std::string& op_type);

// Values random inputs take: floats in [lo, hi], integers in [0, int_range).
struct InputRange {
  float lo = -1, hi = 1;
  int64_t int_range = 4;
};
// The range of input `index` of a node with this plan (positive where the op needs it, indices
// within the indexed axis).
InputRange input_range(const NodeSpec& spec, const OpPlan& plan, size_t index);

}  // namespace modelcost
