// Shared by the quantization, attention and com.microsoft op tests: a model importing the
// com.microsoft domain, small inline initializers of any integer dtype (zero points, lengths,
// scalars) and scalar float scales.
#pragma once
#include <string>
#include <vector>

#include "ops/defs/nn_test_support.h"
#include "test_support.h"

namespace modelcost::testing {

constexpr int32_t kUint8Type = onnx::TensorProto::UINT8;

inline const std::string kMs = "com.microsoft";

// A model builder that imports com.microsoft opset 1.
inline ModelBuilder ms_model() {
  ModelBuilder b;
  b.opset(kMs, 1);
  return b;
}

// An inline integer initializer (int64 in int64_data, the narrower types in int32_data).
inline void int_initializer(ModelBuilder& b, const std::string& name, int32_t dtype, const std::vector<int64_t>& values,
                            const Shape& dims) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) {
    if (dtype == onnx::TensorProto::INT64) t->add_int64_data(v);
    else t->add_int32_data(static_cast<int32_t>(v));
  }
}

// A scalar float scale and a scalar zero point of `dtype`, named <prefix>_scale and <prefix>_zp.
inline void scale_and_zero_point(ModelBuilder& b, const std::string& prefix, int32_t dtype) {
  b.floats(prefix + "_scale", {0.05f}, {});
  int_initializer(b, prefix + "_zp", dtype, {0}, {});
}

}  // namespace modelcost::testing
