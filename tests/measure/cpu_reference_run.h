// Runs one node of a test model on the CPU reference: the given values for its inputs (one vector
// per input; an empty one takes the input's constant value), its planned kind checked supported.
// Shared by the hand-computed reference tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "measure/cpu_reference.h"
#include "test_support.h"

namespace modelcost::testing {

inline std::vector<float> run_planned_reference(const AnalysisRun& run, const std::string& name,
                                                const std::vector<std::vector<float>>& values) {
  const NodeSpec spec = make_node_spec(run.node(name), "");
  const OpPlan plan = plan_operation(spec);
  EXPECT_FALSE(is_unsupported(plan)) << name << ": " << plan_reason(plan);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    HostTensor t(spec.inputs[i].shape, spec.inputs[i].dtype);
    if (i < values.size() && !values[i].empty()) t.data = values[i];
    else if (spec.inputs[i].value)
      for (size_t k = 0; k < t.data.size(); ++k) t.data[k] = static_cast<float>(spec.inputs[i].value->as_double(k));
    inputs.push_back(t);
  }
  std::vector<const HostTensor*> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(spec.has_input(i) ? &inputs[i] : nullptr);
  auto out = make_outputs(spec);
  run_cpu_reference(spec, plan, in, out);
  return out[0].data;
}

}  // namespace modelcost::testing
