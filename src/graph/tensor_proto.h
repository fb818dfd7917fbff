// Reading dims and (small, inline) contents of an onnx::TensorProto. External data is never read.
#pragma once
#include <memory>

#include "modelcost/tensor.h"

namespace modelcost {

Shape tensor_proto_shape(const onnx::TensorProto& t);
bool tensor_proto_is_external(const onnx::TensorProto& t);
// Contents as a TensorValue when stored inline and at most max_elements long; else nullptr.
std::shared_ptr<const TensorValue> read_tensor_value(const onnx::TensorProto& t, size_t max_elements);

}  // namespace modelcost
