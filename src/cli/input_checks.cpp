#include "cli/input_checks.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

const onnx::TensorShapeProto* declared_shape(const TensorInfo& t) {
  if (!t.declared || !t.declared->has_tensor_type() || !t.declared->tensor_type().has_shape()) return nullptr;
  return &t.declared->tensor_type().shape();
}

std::string declared_text(const onnx::TensorShapeProto& shape) {
  std::string text;
  for (const auto& d : shape.dim())
    text += (text.empty() ? "" : ",") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return "[" + text + "]";
}

std::string dims_text(const Shape& shape) {
  std::string text;
  for (int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

// --dim batch=4 --input x=8x3x224x224 where x is [batch,3,224,224]: the whole shape would win
// silently, so two different values for one dim are refused.
void check_dims_agree_with_input(const ShapeOptions& options, const std::string& name, const Shape& shape,
                                 const onnx::TensorShapeProto& declared) {
  for (int axis = 0; axis < declared.dim_size(); ++axis) {
    const std::string& symbol = declared.dim(axis).dim_param();
    auto set = symbol.empty() ? options.dims.end() : options.dims.find(symbol);
    if (set == options.dims.end() || set->second == shape[axis]) continue;
    throw Error(kExitUsage, "--dim " + symbol + "=" + std::to_string(set->second) + " disagrees with --input " + name + "=" +
                                dims_text(shape) + " (its dim " + std::to_string(axis) + " is " + symbol + "); give one of them");
  }
}

}  // namespace

void check_shape_options(const Model& model, const ShapeOptions& options) {
  const Graph& g = model.graph;
  std::set<std::string> symbols;
  for (int id : g.inputs)
    if (const auto* shape = declared_shape(g.tensors[id]))
      for (const auto& d : shape->dim())
        if (d.has_dim_param() && !d.dim_param().empty()) symbols.insert(d.dim_param());
  for (const auto& [name, value] : options.dims) {
    if (symbols.count(name)) continue;
    std::string known;
    for (const auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
    throw Error(kExitUsage, "--dim " + name + "=" + std::to_string(value) + ": the model's inputs have no dim named '" + name +
                                "' (" + (known.empty() ? "they have no symbolic dims; set a whole shape with --input NAME=DIMS"
                                                       : "symbolic dims: " + known) + ")");
  }
  for (const auto& [name, shape] : options.inputs) {
    const int id = g.find(name);
    if (id < 0 || !g.tensors[id].is_graph_input) continue;  // the shape engine names the inputs there are
    const auto* declared = declared_shape(g.tensors[id]);
    if (!declared) continue;
    if (declared->dim_size() != static_cast<int>(shape.size()))
      throw Error(kExitUsage, "--input " + name + "=" + dims_text(shape) + ": '" + name + "' has " +
                                  std::to_string(declared->dim_size()) + " dims (" + declared_text(*declared) + "), got " +
                                  std::to_string(shape.size()));
    check_dims_agree_with_input(options, name, shape, *declared);
  }
}

}  // namespace modelcost
