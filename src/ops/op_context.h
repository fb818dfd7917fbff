// The view of one node that shape and cost rules see: its input and output tensors,
// attributes, and helpers to fail with a message naming the node.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "modelcost/diagnostics.h"
#include "modelcost/errors.h"
#include "modelcost/graph.h"

namespace onnx { class AttributeProto; class GraphProto; }

namespace modelcost {

// Shape inference of a body graph (If/Loop/Scan), which the shapes stage provides to the
// control-flow rules; an interface so that the op rules do not depend on the stage above them.
class BodyInference {
 public:
  virtual ~BodyInference() = default;
  // Infers a subgraph whose inputs and outer-scope tensors are already set.
  virtual void infer_graph(Graph& graph) = 0;
  // The run's budgets (the shapes stage keeps them): whether a new folded value of `elements`
  // elements still fits, booking one, and whether half the inference work is spent (loops then
  // stop re-inferring their bodies).
  virtual bool may_fold(double elements) const = 0;
  virtual void charge_fold(double elements) = 0;
  virtual bool work_strained() const = 0;
};

// Thrown by a rule when a needed value (e.g. Reshape's target shape) is not known at analysis
// time. Not a model error: the engine falls back to ONNX's inference and the declared shapes.
class NotInferable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OpContext {
 public:
  OpContext(Graph& graph, const Node& node, Diagnostics& diagnostics, BodyInference* engine = nullptr)
      : graph_(graph), node_(node), diagnostics_(diagnostics), engine_(engine) {}
  // A view of an analysed node for the readers of a shaped graph (cost and plan rules): only a
  // const OpContext may be made this way, and its const members never write the graph.
  static const OpContext reading(const Graph& graph, const Node& node, Diagnostics& diagnostics) {
    return OpContext(const_cast<Graph&>(graph), node, diagnostics);  // NOLINT: read through const only
  }

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int opset() const { return node_.opset; }
  Diagnostics& diagnostics() const { return diagnostics_; }
  BodyInference* engine() const { return engine_; }

  // Inputs: i may name an omitted optional input; has_input says whether it is there.
  size_t num_inputs() const { return node_.inputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] >= 0; }
  const TensorInfo& in(size_t i) const;
  const Shape& in_shape(size_t i) const { return in(i).shape; }
  int32_t in_dtype(size_t i) const { return in(i).dtype; }
  size_t in_rank(size_t i) const { return in(i).shape.size(); }
  // Known contents of input i (a constant or a folded shape computation), or nullptr.
  const TensorValue* value(size_t i) const;
  // Contents of input i as integers; fails naming the node when they are not known.
  std::vector<int64_t> require_ints(size_t i, const char* what) const;

  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_output(size_t i) const { return i < node_.outputs.size() && node_.outputs[i] >= 0; }
  const TensorInfo& out(size_t i) const;
  TensorInfo& out(size_t i);
  // Sets output i's dtype and shape (ignored for an omitted optional output). Checks dims >= 0.
  void set_output(size_t i, int32_t dtype, Shape shape, bool estimate = false);
  // Sets output i's contents; dropped (left unknown) once the run's folding budget is spent.
  void set_value(size_t i, TensorValue value);
  // Output i shares contents already held (pass-through ops): no copy, no budget.
  void set_value(size_t i, std::shared_ptr<const TensorValue> value);
  std::shared_ptr<const TensorValue> shared_value(size_t i) const;
  // Whether a folded value of `elements` elements may be computed: at most kMaxFoldedElements,
  // and within what is left of the run's budget.
  bool may_fold(double elements) const;
  // True when every present input is an estimate-free... used to propagate upper bounds.
  bool any_input_estimate() const;

  // Attributes.
  const onnx::AttributeProto* attr(const char* name) const;
  bool has_attr(const char* name) const { return attr(name) != nullptr; }
  int64_t attr_int(const char* name, int64_t fallback) const;
  float attr_float(const char* name, float fallback) const;
  std::string attr_string(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name) const;  // empty when absent
  std::vector<float> attr_floats(const char* name) const;

  // Normalises a possibly negative axis against rank, failing when it is out of range.
  int64_t axis(int64_t axis, size_t rank) const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  Graph& graph_;
  const Node& node_;
  Diagnostics& diagnostics_;
  BodyInference* engine_;
};

}  // namespace modelcost
