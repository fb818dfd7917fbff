// Op rules: control flow (If, Loop, Scan); the sequence and optional ops register from
// controlflow_sequence.cpp. A body is inferred by the shape engine once its inputs and the
// outer-scope tensors it reads are bound here; the cost model adds the bodies' costs into the node
// as the cost rule says (repeats, heavier branch, taken branch). Formulas: docs/ops/controlflow.md.
#include "ops/defs/controlflow_common.h"
#include "ops/plan_helpers.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>

namespace modelcost {

void register_sequence_ops(OpRegistry& r);  // controlflow_sequence.cpp

// ---- shared by the control-flow files ----

int subgraph_index(const OpContext& c, const char* attribute) {
  const auto& subs = c.node().subgraphs;
  for (size_t i = 0; i < subs.size(); ++i)
    if (subs[i].attribute == attribute) return static_cast<int>(i);
  c.fail(std::string("graph attribute ") + attribute + " is missing");
}

Graph& subgraph(const OpContext& c, const char* attribute) {
  return *c.node().subgraphs[subgraph_index(c, attribute)].graph;
}

void prepare_body(const OpContext& c, Graph& body, size_t expected_inputs, size_t expected_outputs) {
  if (body.inputs.size() != expected_inputs)
    c.fail("body graph has " + std::to_string(body.inputs.size()) + " inputs, expected " + std::to_string(expected_inputs));
  if (body.outputs.size() != expected_outputs)
    c.fail("body graph has " + std::to_string(body.outputs.size()) + " outputs, expected " +
           std::to_string(expected_outputs));
  // Forget what an earlier pass inferred: a Loop body is inferred again with grown shapes.
  for (const Node& n : body.nodes)
    for (int id : n.outputs) {
      if (id < 0) continue;
      TensorInfo& t = body.tensors[id];
      t.dtype = 0;
      t.shape.clear();
      t.has_shape = false;
      t.estimate = false;
      t.value.reset();
    }
  for (const auto& [local, outer] : body.outer_refs) {
    TensorInfo& dst = body.tensors[local];
    const TensorInfo& src = c.graph().tensors[outer];
    const std::string name = dst.name;
    const onnx::TypeProto* declared = dst.declared;
    dst = src;  // dtype, shape, known value, and the initializer (a weight the body reads)
    dst.name = name;
    dst.is_graph_input = false;
    if (declared) dst.declared = declared;
  }
}

void bind_body_input(Graph& body, size_t i, int32_t dtype, Shape shape, bool estimate) {
  TensorInfo& t = body.tensors[body.inputs[i]];
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.has_shape = true;
  t.estimate = estimate;
  t.value.reset();
}

void infer_body(const OpContext& c, Graph& body) {
  if (!c.engine()) throw NotInferable("subgraph inference needs the shape engine");
  c.engine()->infer_graph(body);
}

const TensorInfo& body_output(const Graph& body, size_t i) { return body.tensors[body.outputs[i]]; }

bool body_outputs_shaped(const Graph& body) {
  for (int id : body.outputs)
    if (!body.tensors[id].has_shape) return false;
  return true;
}

namespace {

constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

// ---- If ----

// The condition when it is known at analysis time: 1 = then, 0 = else, -1 = unknown.
int known_condition(const OpContext& c) {
  const TensorValue* v = c.value(0);
  if (!v || v->size() == 0) return -1;
  return v->as_double(0) != 0 ? 1 : 0;
}

// Upper bound of two branch outputs: equal shapes stay exact; same rank takes the elementwise
// max; different ranks take the larger tensor.
Shape upper_bound(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return element_count(a) >= element_count(b) ? a : b;
  Shape out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = std::max(a[i], b[i]);
  return out;
}

void infer_if(OpContext& c) {
  const size_t n = c.num_outputs();
  Graph& then_branch = subgraph(c, "then_branch");
  Graph& else_branch = subgraph(c, "else_branch");
  const bool cond_estimate = c.in(0).estimate;
  const int cond = known_condition(c);
  if (cond >= 0) {
    Graph& taken = cond ? then_branch : else_branch;
    prepare_body(c, taken, 0, n);
    infer_body(c, taken);
    for (size_t i = 0; i < n; ++i) {
      const TensorInfo& out = body_output(taken, i);
      if (!out.has_shape) continue;
      c.set_output(i, out.dtype, out.shape, out.estimate || cond_estimate);
      c.set_value(i, out.value);
    }
    return;
  }
  // Unknown condition: both branches. A branch that fails for these inputs cannot be the one
  // that runs, so the other one gives the outputs.
  bool ok[2] = {true, true};
  std::string failure;
  Graph* branches[2] = {&then_branch, &else_branch};
  for (int b = 0; b < 2; ++b) {
    prepare_body(c, *branches[b], 0, n);
    try {
      infer_body(c, *branches[b]);
    } catch (const Error& e) {
      if (!failure.empty()) throw;
      ok[b] = false;
      failure = e.what();
    }
  }
  if (!ok[0] || !ok[1])
    c.diagnostics().warn_counted("If: a branch fails for the inferred inputs, the other one is used (estimate)",
                                 c.node().name + ": " + failure);
  for (size_t i = 0; i < n; ++i) {
    const TensorInfo& a = body_output(then_branch, i);
    const TensorInfo& b = body_output(else_branch, i);
    const bool a_ok = ok[0] && a.has_shape, b_ok = ok[1] && b.has_shape;
    if (a_ok && b_ok) {
      const bool same = a.shape == b.shape;
      c.set_output(i, a.dtype ? a.dtype : b.dtype, same ? a.shape : upper_bound(a.shape, b.shape),
                   !same || a.estimate || b.estimate || cond_estimate);
    } else if (a_ok || b_ok) {
      const TensorInfo& only = a_ok ? a : b;
      c.set_output(i, only.dtype, only.shape, true);
    }
  }
}

OpCost cost_if(const OpContext& c) {
  OpCost cost;
  const int cond = known_condition(c);
  if (cond >= 0) {
    cost.subgraph_only = subgraph_index(c, cond ? "then_branch" : "else_branch");
    cost.estimate = c.in(0).estimate;
    return cost;
  }
  const bool then_ok = body_outputs_shaped(subgraph(c, "then_branch"));
  const bool else_ok = body_outputs_shaped(subgraph(c, "else_branch"));
  if (then_ok != else_ok) {
    cost.subgraph_only = subgraph_index(c, then_ok ? "then_branch" : "else_branch");
    cost.estimate = true;
    return cost;
  }
  cost.subgraph_max = true;  // the heavier branch, marked estimate by the cost model
  return cost;
}

// FLOPs plus bytes of a body's nodes, as the cost model weighs branches (nested bodies not added).
double body_weight(const Graph& body) {
  double weight = 0;
  Diagnostics ignored;
  for (const Node& n : body.nodes) {
    const OpRule* rule = OpRegistry::instance().find(n.domain, n.op_type);
    if (!rule || !rule->cost) continue;
    try {
      const OpContext c = OpContext::reading(body, n, ignored);
      const OpCost cost = rule->cost(c);
      double bytes = 0;
      for (size_t i = 0; i < c.num_outputs(); ++i)
        if (n.outputs[i] >= 0) bytes += element_count(c.out(i).shape) * dtype_size(c.out(i).dtype);
      if (cost.bytes_read >= 0) bytes += cost.bytes_read;
      else
        for (size_t i = 0; i < c.num_inputs(); ++i)
          if (c.has_input(i)) bytes += element_count(c.in_shape(i)) * dtype_size(c.in_dtype(i));
      weight += cost.flops + (cost.moves_no_data ? 0 : bytes);
    } catch (const std::exception&) {  // an unshaped node weighs nothing, as in the cost model
    }
  }
  return weight;
}

// The branch cost_if costs: the known condition's, the only shaped one, else the heavier.
OpPlan plan_if(const OpContext& c) {
  const int cond = known_condition(c);
  if (cond >= 0)
    return BranchPlan{subgraph_index(c, cond ? "then_branch" : "else_branch"),
                      std::string(cond ? "then" : "else") + " branch: the condition is known at analysis time"};
  const bool then_ok = body_outputs_shaped(subgraph(c, "then_branch"));
  const bool else_ok = body_outputs_shaped(subgraph(c, "else_branch"));
  if (then_ok != else_ok)
    return BranchPlan{subgraph_index(c, then_ok ? "then_branch" : "else_branch"),
                      std::string(then_ok ? "then" : "else") + " branch: the other one has no shapes"};
  if (!then_ok) return unsupported("If: neither branch has concrete shapes");
  const bool then_heavier = body_weight(subgraph(c, "then_branch")) > body_weight(subgraph(c, "else_branch"));
  return BranchPlan{subgraph_index(c, then_heavier ? "then_branch" : "else_branch"),
                    std::string(then_heavier ? "then" : "else") + " branch: the heavier one, condition unknown"};
}

// ---- Loop ----

// Trip counts at or above this are "run until the condition says stop" sentinels (exporters
// write INT64_MAX), not bounds worth multiplying by.
constexpr int64_t kNoTripBound = INT32_MAX;
// Passes over a body whose loop-carried shapes change from one iteration to the next.
constexpr int kMaxShapePasses = 16;

struct TripCount {
  double count = 1;
  bool exact = true;
  bool assumed = false;  // nothing bounds it: one iteration assumed
};

// The condition the body computes does not depend on data: it passes its input through or is
// a constant true.
bool condition_is_static(const Graph& body) {
  if (body.outputs.empty() || body.inputs.size() < 2) return false;
  const int cond_out = body.outputs[0];
  if (cond_out == body.inputs[1]) return true;
  const TensorInfo& t = body.tensors[cond_out];
  if (!t.value || t.value->size() == 0) return false;
  for (size_t i = 0; i < t.value->size(); ++i)
    if (t.value->as_double(i) == 0) return false;
  return true;
}

TripCount loop_trip_count(const OpContext& c, const Graph& body) {
  TripCount trip;
  const TensorValue* m = c.has_input(0) ? c.value(0) : nullptr;
  const TensorValue* cond = c.has_input(1) ? c.value(1) : nullptr;
  const bool has_cond = c.has_input(1);
  if (cond && cond->size() > 0 && cond->as_double(0) == 0) {
    trip.count = 0;  // the condition is false before the first iteration
    return trip;
  }
  const bool data_dependent = has_cond && (!cond || !condition_is_static(body));
  const bool m_known = m && m->size() > 0 && m->as_int(0) < kNoTripBound;
  if (m_known) {
    trip.count = static_cast<double>(std::max<int64_t>(0, m->as_int(0)));
    trip.exact = !data_dependent && !(c.has_input(0) && c.in(0).estimate);
    return trip;
  }
  trip.count = 1;
  trip.exact = false;
  trip.assumed = true;
  return trip;
}

// Whether the loop-carried shapes differ between the node's inputs, the last pass's body inputs
// and its outputs: the costs of the last pass then stand for every iteration (an estimate).
bool carried_shapes_changed(const OpContext& c, const Graph& body, size_t carried) {
  if (body.inputs.size() < 2 + carried || body.outputs.size() < 1 + carried) return true;
  for (size_t i = 0; i < carried; ++i) {
    const Shape& bound = body.tensors[body.inputs[2 + i]].shape;
    if (bound != c.in_shape(2 + i) || bound != body_output(body, 1 + i).shape) return true;
  }
  return false;
}

void infer_loop(OpContext& c) {
  Graph& body = subgraph(c, "body");
  if (c.num_inputs() < 2) c.fail("Loop needs the inputs M and cond (either may be empty)");
  const size_t carried = c.num_inputs() - 2;
  if (c.num_outputs() < carried)
    c.fail("Loop has " + std::to_string(c.num_outputs()) + " outputs for " + std::to_string(carried) + " loop-carried values");
  const size_t scanned = c.num_outputs() - carried;
  std::vector<int32_t> dtypes(carried);
  std::vector<Shape> shapes(carried);
  std::vector<bool> estimates(carried);
  for (size_t i = 0; i < carried; ++i) {
    dtypes[i] = c.in_dtype(2 + i);
    shapes[i] = c.in_shape(2 + i);
    estimates[i] = c.in(2 + i).estimate;
  }
  int passes = 0;
  bool stable = false;
  TripCount trip;
  while (true) {
    prepare_body(c, body, 2 + carried, 1 + carried + scanned);
    bind_body_input(body, 0, kInt64, {}, false);
    bind_body_input(body, 1, kBool, {}, false);
    for (size_t i = 0; i < carried; ++i) bind_body_input(body, 2 + i, dtypes[i], shapes[i], estimates[i]);
    infer_body(c, body);
    ++passes;
    trip = loop_trip_count(c, body);
    stable = true;
    for (size_t i = 0; i < carried; ++i) {
      const TensorInfo& out = body_output(body, 1 + i);
      if (!out.has_shape) continue;
      if (out.shape != shapes[i] || out.dtype != dtypes[i]) stable = false;
    }
    // Past half the run's inference budget, nested loops stop re-inferring (the growth is then
    // extrapolated: an estimate) so that deep nesting cannot multiply passes without bound.
    if (stable || passes >= std::min<double>(trip.count, kMaxShapePasses) || c.engine()->work_strained()) break;
    for (size_t i = 0; i < carried; ++i) {
      const TensorInfo& out = body_output(body, 1 + i);
      if (!out.has_shape) continue;
      dtypes[i] = out.dtype;
      shapes[i] = out.shape;
      estimates[i] = out.estimate;
    }
  }
  if (trip.assumed)
    c.diagnostics().warn_counted("Loop: trip count not known at analysis time; one iteration assumed (estimate)",
                                 c.node().name);
  const bool trip_estimate = !trip.exact;
  // Changing shapes are exact when every iteration was followed.
  const bool carried_exact = stable || (trip.exact && passes == trip.count);
  for (size_t i = 0; i < carried; ++i) {
    if (trip.count == 0) {
      c.set_output(i, c.in_dtype(2 + i), c.in_shape(2 + i));
      continue;
    }
    const TensorInfo& out = body_output(body, 1 + i);
    if (!out.has_shape) continue;
    Shape shape = out.shape;
    if (!carried_exact && passes < trip.count && shape.size() == shapes[i].size()) {
      // More iterations than passes followed: extend the last pass's growth linearly.
      const double remaining = trip.count - passes;
      for (size_t d = 0; d < shape.size(); ++d)
        shape[d] = checked_dim(c, static_cast<double>(shape[d]) +
                                      remaining * static_cast<double>(std::max<int64_t>(0, shape[d] - shapes[i][d])),
                               "a loop-carried dim");
    }
    c.set_output(i, out.dtype, shape, out.estimate || !carried_exact);
  }
  for (size_t k = 0; k < scanned; ++k) {
    const TensorInfo& out = body_output(body, 1 + carried + k);
    if (!out.has_shape) continue;
    Shape shape{static_cast<int64_t>(trip.count)};
    shape.insert(shape.end(), out.shape.begin(), out.shape.end());
    c.set_output(carried + k, out.dtype, std::move(shape), out.estimate || trip_estimate || !stable);
  }
}

OpCost cost_loop(const OpContext& c) {
  const Graph& body = subgraph(c, "body");
  const TripCount trip = loop_trip_count(c, body);
  OpCost cost;
  cost.subgraph_repeats = trip.count;
  cost.estimate = !trip.exact || carried_shapes_changed(c, body, c.num_inputs() - 2);
  return cost;
}

// ---- Scan ----

struct ScanLayout {
  size_t states = 0, scan_inputs = 0, scan_outputs = 0;
  size_t first_input = 0;   // opset 8: input 0 is the optional sequence_lens
  bool batched = false;     // opset 8: every input and output has a leading batch dim
  int64_t batch = 1, length = 0;
};

ScanLayout scan_layout(const OpContext& c) {
  ScanLayout s;
  s.batched = c.opset() < 9;
  s.first_input = s.batched ? 1 : 0;
  const int64_t m = required_int_attr(c, "num_scan_inputs", 1);
  if (static_cast<size_t>(m) + s.first_input > c.num_inputs())
    c.fail("num_scan_inputs = " + std::to_string(m) + " exceeds the " + std::to_string(c.num_inputs()) + " inputs");
  s.scan_inputs = static_cast<size_t>(m);
  s.states = c.num_inputs() - s.first_input - s.scan_inputs;
  if (c.num_outputs() < s.states) c.fail("Scan has fewer outputs than state variables");
  s.scan_outputs = c.num_outputs() - s.states;
  const auto axes = c.attr_ints("scan_input_axes");
  if (!axes.empty() && axes.size() != s.scan_inputs)
    c.fail("scan_input_axes has " + std::to_string(axes.size()) + " values for " + std::to_string(s.scan_inputs) + " scan inputs");
  for (size_t j = 0; j < s.scan_inputs; ++j) {
    const Shape& x = c.in_shape(s.first_input + s.states + j);
    if (s.batched && x.size() < 2) c.fail("scan input " + std::to_string(j) + " needs [batch, sequence, ...] dims");
    const int64_t axis = s.batched ? 1 : c.axis(axes.empty() ? 0 : axes[j], x.size());
    if (j == 0) s.length = x[axis];
    else if (x[axis] != s.length)
      c.fail("scan inputs have different sequence lengths (" + std::to_string(s.length) + " and " + std::to_string(x[axis]) + ")");
    if (s.batched) s.batch = x[0];
  }
  return s;
}

void infer_scan(OpContext& c) {
  Graph& body = subgraph(c, "body");
  const ScanLayout s = scan_layout(c);
  prepare_body(c, body, s.states + s.scan_inputs, s.states + s.scan_outputs);
  const auto in_axes = c.attr_ints("scan_input_axes");
  for (size_t i = 0; i < s.states; ++i) {
    const TensorInfo& t = c.in(s.first_input + i);
    Shape shape = t.shape;
    if (s.batched && !shape.empty()) shape.erase(shape.begin());
    bind_body_input(body, i, t.dtype, shape, t.estimate);
  }
  for (size_t j = 0; j < s.scan_inputs; ++j) {
    const TensorInfo& t = c.in(s.first_input + s.states + j);
    Shape shape = t.shape;
    if (s.batched) {
      shape.erase(shape.begin(), shape.begin() + 2);
    } else {
      shape.erase(shape.begin() + c.axis(in_axes.empty() ? 0 : in_axes[j], shape.size()));
    }
    bind_body_input(body, s.states + j, t.dtype, shape, t.estimate);
  }
  infer_body(c, body);
  for (size_t i = 0; i < s.states; ++i) {
    const TensorInfo& out = body_output(body, i);
    if (!out.has_shape) continue;
    Shape shape = out.shape;
    if (s.batched) shape.insert(shape.begin(), s.batch);
    c.set_output(i, out.dtype, shape, out.estimate);
  }
  const auto out_axes = c.attr_ints("scan_output_axes");
  if (!out_axes.empty() && out_axes.size() != s.scan_outputs)
    c.fail("scan_output_axes has " + std::to_string(out_axes.size()) + " values for " + std::to_string(s.scan_outputs) +
           " scan outputs");
  for (size_t k = 0; k < s.scan_outputs; ++k) {
    const TensorInfo& out = body_output(body, s.states + k);
    if (!out.has_shape) continue;
    Shape shape = out.shape;
    if (s.batched) {
      shape.insert(shape.begin(), {s.batch, s.length});
    } else {
      const int64_t axis = c.axis(out_axes.empty() ? 0 : out_axes[k], shape.size() + 1);
      shape.insert(shape.begin() + axis, s.length);
    }
    c.set_output(s.states + k, out.dtype, shape, out.estimate);
  }
}

OpCost cost_scan(const OpContext& c) {
  const ScanLayout s = scan_layout(c);
  OpCost cost;
  cost.subgraph_repeats = static_cast<double>(s.batch) * static_cast<double>(s.length);
  return cost;
}

}  // namespace

void register_controlflow_ops(OpRegistry& r) {
  r.add(OpForm::kOther, {
      {"", "If", infer_if, cost_if, plan_if},
      {"", "Loop", infer_loop, cost_loop, not_measured("control flow (subgraphs)")},
      {"", "Scan", infer_scan, cost_scan, not_measured("control flow (subgraphs)")},
  });
  register_sequence_ops(r);
}

}  // namespace modelcost
