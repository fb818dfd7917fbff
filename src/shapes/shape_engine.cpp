#include "shapes/shape_engine.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "modelcost/errors.h"
#include "ops/input_validation.h"
#include "ops/op_registry.h"
#include "ops/rule_helpers.h"

namespace modelcost {

namespace {

// What the graph inputs made of --dim: the symbols set, the dims left at 1 (named ones by their
// symbol, unnamed ones as "input[axis]").
struct InputDims {
  std::set<std::string> used, defaulted, unnamed;
  std::string unnamed_example;  // "X=1x8": an --input that sets the first such input as analysed
};

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// The input's shape: its --input, else its declared dims with --dim values (unset ones at 1).
void shape_input(const Model& model, const ShapeOptions& options, TensorInfo& t, InputDims& dims) {
  const auto& tt = t.declared->tensor_type();
  t.dtype = tt.elem_type();
  auto given = options.inputs.find(t.name);
  bool user_sized = given != options.inputs.end();
  if (user_sized) {
    t.shape = given->second;
    // A symbol of a dim that --input sets whole counts as used (--dim batch=8 --input x=8x3).
    for (const auto& d : tt.shape().dim())
      if (d.has_dim_param()) dims.used.insert(d.dim_param());
  } else {
    t.shape.clear();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          throw Error(kExitInvalidModel, model.path + ": input '" + t.name + "' has a negative dim " + std::to_string(d.dim_value()));
        t.shape.push_back(d.dim_value());
      } else if (d.has_dim_param() && options.dims.count(d.dim_param())) {
        dims.used.insert(d.dim_param());
        user_sized = true;
        t.shape.push_back(options.dims.at(d.dim_param()));
      } else {
        const bool named = d.has_dim_param() && !d.dim_param().empty();
        (named ? dims.defaulted : dims.unnamed).insert(named ? d.dim_param() : t.name + "[" + std::to_string(t.shape.size()) + "]");
        t.shape.push_back(1);
      }
    }
  }
  if (dims.unnamed_example.empty() && !dims.unnamed.empty()) {
    dims.unnamed_example = t.name + "=";
    for (size_t i = 0; i < t.shape.size(); ++i) dims.unnamed_example += (i ? "x" : "") + std::to_string(t.shape[i]);
  }
  // A size the user gave (--input, --dim) that is too large is their option's fault, not the file's.
  if (const std::string bad = shape_limit_violation(t.shape); !bad.empty())
    throw Error(user_sized ? kExitUsage : kExitInvalidModel, model.path + ": input '" + t.name + "': " + bad);
  t.has_shape = true;
}

void warn_about_dims(InputDims& dims, const ShapeOptions& options, Diagnostics& diagnostics) {
  if (!dims.defaulted.empty())
    diagnostics.warn("symbolic dims not set, using 1: " + joined(dims.defaulted) + " (set them with --dim NAME=VALUE)");
  // An unnamed dim has no name for --dim: only a whole shape sets it.
  if (!dims.unnamed.empty())
    diagnostics.warn("unnamed dims not set, using 1: " + joined(dims.unnamed) + " (they have no name for --dim; set the whole shape, " +
                     "e.g. --input " + dims.unnamed_example + ")");
  for (const auto& [name, value] : options.dims)
    if (!dims.used.count(name)) diagnostics.warn("--dim " + name + " names no symbolic dim of the model's inputs");
  dims.defaulted.insert(dims.unnamed.begin(), dims.unnamed.end());
}

}  // namespace

ShapeEngine::ShapeEngine(const OpRegistry& registry, Diagnostics& diagnostics)
    : registry_(registry), diagnostics_(diagnostics) {}

std::shared_ptr<Graph> ShapeEngine::run(const Model& model, const ShapeOptions& options) {
  options_ = options;
  auto shaped = std::make_shared<Graph>(model.graph);
  Graph& g = *shaped;
  for (const auto& [name, shape] : options.inputs) {
    const int id = g.find(name);
    if (id < 0 || !g.tensors[id].is_graph_input) {
      std::string names;
      for (int in : g.inputs) names += (names.empty() ? "" : ", ") + g.tensors[in].name;
      throw Error(kExitUsage, "--input " + name + ": the model has no input of that name (inputs: " + names + ")");
    }
  }
  InputDims dims;
  for (int id : g.inputs) {
    TensorInfo& t = g.tensors[id];
    if (!t.declared || !t.declared->has_tensor_type()) {
      diagnostics_.warn("input '" + t.name + "' is not a tensor; its consumers stay unshaped");
      continue;
    }
    shape_input(model, options, t, dims);
  }
  warn_about_dims(dims, options, diagnostics_);
  const auto standard = model.opsets.find("");
  if (standard != model.opsets.end() && standard->second > kMaxKnownOnnxOpset)
    diagnostics_.warn("opset " + std::to_string(standard->second) + " of the ai.onnx domain is newer than any known (up to " +
                      std::to_string(kMaxKnownOnnxOpset) + "): using the rules of opset " +
                      std::to_string(kMaxKnownOnnxOpset));
  try {
    infer_graph(g);
  } catch (const Error& e) {
    // Unset dims at 1 often make a graph inconsistent (a KV cache whose past and total lengths
    // must differ): name the dims to set rather than the node that failed first.
    if (dims.defaulted.empty() || e.code() != kExitInvalidModel) throw;
    std::string names;
    for (const auto& n : dims.defaulted) names += (names.empty() ? "" : ", ") + n;
    throw Error(kExitUsage, "the model does not analyse with its unset dims at 1; set them with --dim NAME=VALUE: " +
                                names + " (with them at 1: " + e.what() + ")");
  }
  return shaped;
}

void ShapeEngine::infer_graph(Graph& graph) {
  for (Node& node : graph.nodes) infer_node(graph, node);
}

void ShapeEngine::infer_node(Graph& graph, Node& node) {
  if (++inferences_ > kMaxNodeInferences)
    throw NodeError(node.name, node.op_type,
                    "shape inference stopped after " + std::to_string(kMaxNodeInferences) +
                        " node inferences (If/Loop/Scan bodies nested too deep or re-inferred too often)");
  const OpRule* rule = registry_.find(node.domain, node.op_type);
  OpContext c(graph, node, diagnostics_, this);
  if (!rule) {
    infer_unknown_op(c);
  } else if (rule->infer) {
    bool inputs_shaped = true;
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (c.has_input(i) && !c.in(i).has_shape) inputs_shaped = false;
    if (inputs_shaped) {
      validate_node(c, *rule);
      try {
        rule->infer(c);
      } catch (const NotInferable& e) {
        diagnostics_.warn_counted(node.op_type + ": " + e.what() + "; shapes from ONNX or the file", node.name);
      }
      bool complete = true;
      for (size_t i = 0; i < c.num_outputs(); ++i)
        if (c.has_output(i) && !c.out(i).has_shape) complete = false;
      if (!complete && rule->infer != infer_with_onnx_schema) infer_with_onnx_schema(c);
    }
  }
  apply_declared_shapes(graph, node);
}

// An op with no rule: a standard op of an opset newer than known is refused (its semantics are
// not known); any other keeps the shapes ONNX 1.12's schema (ai.onnx.ml, old contrib ops) or the
// file declares, and its cost stays unknown.
void ShapeEngine::infer_unknown_op(OpContext& c) {
  const Node& node = c.node();
  if (is_standard_domain(node.domain) && node.opset > kMaxKnownOnnxOpset)
    throw Error(kExitUnsupported, "node '" + node.name + "': op " + node.op_type + " of ai.onnx opset " +
                                      std::to_string(node.opset) + " is not known (rules up to opset " +
                                      std::to_string(kMaxKnownOnnxOpset) + "); declare it with --ops FILE");
  diagnostics_.warn_counted("unknown op " + (node.domain.empty() ? "" : node.domain + ".") + node.op_type +
                                ": shapes from the file, cost unknown",
                            node.name);
  bool inputs_shaped = true;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && !c.in(i).has_shape) inputs_shaped = false;
  if (inputs_shaped) infer_with_onnx_schema(c);
}

bool ShapeEngine::resolve_declared(const TensorInfo& tensor, int32_t* dtype, Shape* shape) const {
  if (!tensor.declared || !tensor.declared->has_tensor_type()) return false;
  const auto& tt = tensor.declared->tensor_type();
  if (!tt.has_shape()) return false;
  shape->clear();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() <= kMaxTensorDim) shape->push_back(d.dim_value());
    else if (d.has_dim_param() && options_.dims.count(d.dim_param())) shape->push_back(options_.dims.at(d.dim_param()));
    else return false;
  }
  if (element_count(*shape) > kMaxTensorElements) return false;
  *dtype = tt.elem_type();
  return true;
}

void ShapeEngine::apply_declared_shapes(Graph& graph, const Node& node) {
  for (int id : node.outputs) {
    if (id < 0 || graph.tensors[id].has_shape) continue;
    TensorInfo& t = graph.tensors[id];
    int32_t dtype = 0;
    Shape shape;
    if (resolve_declared(t, &dtype, &shape)) {
      t.dtype = dtype;
      t.shape = std::move(shape);
      t.has_shape = true;
    }
  }
}

}  // namespace modelcost
