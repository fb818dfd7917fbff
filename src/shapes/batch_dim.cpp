#include "shapes/batch_dim.h"

#include <onnx/onnx_pb.h>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

const onnx::TensorShapeProto* declared_shape(const TensorInfo& t) {
  if (!t.declared || !t.declared->has_tensor_type() || !t.declared->tensor_type().has_shape()) return nullptr;
  return &t.declared->tensor_type().shape();
}

}  // namespace

BatchDim find_batch_dim(const Model& model, const ShapeOptions& options, const std::string& named) {
  const Graph& g = model.graph;
  BatchDim dim;
  if (!named.empty()) {
    for (int id : g.inputs)
      if (const auto* s = declared_shape(g.tensors[id]))
        for (const auto& d : s->dim())
          if (d.dim_param() == named) {
            dim.symbol = named;
            auto it = options.dims.find(named);
            dim.current = it == options.dims.end() ? 1 : it->second;
            return dim;
          }
    throw Error(kExitUsage, "--batch-dim " + named + ": no input of the model has a dim of that name");
  }
  if (g.inputs.empty()) throw Error(kExitUsage, model.path + ": the model has no inputs, so no batch dim to sweep");
  const TensorInfo& first = g.tensors[g.inputs.front()];
  const auto* s = declared_shape(first);
  if (!s || s->dim_size() == 0) throw Error(kExitUsage, "input '" + first.name + "' has no dims; name the batch dim with --batch-dim");
  const auto& d0 = s->dim(0);
  auto given = options.inputs.find(first.name);
  const bool given_whole = given != options.inputs.end() && !given->second.empty();
  if (d0.has_dim_param() && !d0.dim_param().empty()) {
    dim.symbol = d0.dim_param();
    auto it = options.dims.find(dim.symbol);
    dim.current = it != options.dims.end() ? it->second : given_whole ? given->second[0] : 1;
  } else {
    dim.current = given_whole ? given->second[0] : d0.dim_value();
  }
  return dim;
}

ShapeOptions with_batch(const Model& model, ShapeOptions options, const BatchDim& dim, int64_t batch) {
  const Graph& g = model.graph;
  if (!dim.symbol.empty()) {
    options.dims[dim.symbol] = batch;
    // An input given whole (--input) keeps its shape but for the batch: its dims named after it.
    for (int id : g.inputs) {
      auto given = options.inputs.find(g.tensors[id].name);
      const auto* s = declared_shape(g.tensors[id]);
      if (given == options.inputs.end() || !s) continue;
      for (int axis = 0; axis < s->dim_size() && axis < static_cast<int>(given->second.size()); ++axis)
        if (s->dim(axis).dim_param() == dim.symbol) given->second[axis] = batch;
    }
    return options;
  }
  const auto* first = declared_shape(g.tensors[g.inputs.front()]);
  const int64_t fixed = first->dim(0).dim_value();
  for (int id : g.inputs) {
    const TensorInfo& t = g.tensors[id];
    const auto* s = declared_shape(t);
    if (!s || s->dim_size() == 0 || s->dim(0).dim_value() != fixed) continue;
    Shape shape;
    auto given = options.inputs.find(t.name);
    if (given != options.inputs.end()) {
      shape = given->second;
    } else {
      for (const auto& d : s->dim()) {
        auto sym = options.dims.find(d.dim_param());
        shape.push_back(d.has_dim_value() ? d.dim_value() : sym != options.dims.end() ? sym->second : 1);
      }
    }
    shape[0] = batch;
    options.inputs[t.name] = shape;
  }
  return options;
}

}  // namespace modelcost
