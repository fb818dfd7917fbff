#include "report/model_info.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

namespace modelcost {

std::vector<InputSummary> summarize_inputs(const Analysis& analysis) {
  std::vector<InputSummary> inputs;
  const Graph& graph = analysis.graph ? *analysis.graph : analysis.model->graph;
  for (int id : graph.inputs) {
    const TensorInfo& tensor = graph.tensors[id];
    InputSummary input;
    input.name = tensor.name;
    input.has_shape = tensor.has_shape;
    input.shape = tensor.shape;
    if (tensor.declared && tensor.declared->has_tensor_type()) {
      const auto& type = tensor.declared->tensor_type();
      input.dtype = dtype_name(type.elem_type());
      if (type.has_shape())
        for (const auto& dim : type.shape().dim())
          input.declared.push_back(dim.has_dim_value()   ? std::to_string(dim.dim_value())
                                   : dim.has_dim_param() ? dim.dim_param()
                                                         : "?");
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

std::vector<std::pair<std::string, int>> sorted_opsets(const Model& model) {
  std::vector<std::pair<std::string, int>> opsets;
  for (const auto& [domain, version] : model.opsets) opsets.emplace_back(domain.empty() ? "ai.onnx" : domain, version);
  std::sort(opsets.begin(), opsets.end());
  return opsets;
}

std::string shape_dims_text(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

}  // namespace modelcost
