#include "modelcost/tensor.h"

#include <onnx/onnx_pb.h>

namespace modelcost {

double element_count(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

bool is_rows_view(const Shape& rows, const Shape& view) {
  return rows.size() == 2 && rows != view && !view.empty() && view.back() == rows.back() &&
         element_count(view) == element_count(rows);
}

// Rank a tensor may have (numpy's limit): a file cannot make every tensor a 65,536-dim shape.
constexpr size_t kMaxTensorRank = 64;

std::string shape_limit_violation(const Shape& shape) {
  if (shape.size() > kMaxTensorRank)
    return "a shape of rank " + std::to_string(shape.size()) + " (over " + std::to_string(kMaxTensorRank) + ")";
  for (int64_t d : shape) {
    if (d < 0) return "dim " + std::to_string(d) + " in " + shape_to_string(shape) + " is negative";
    if (d > kMaxTensorDim) return "dim " + std::to_string(d) + " in " + shape_to_string(shape) + " is over 2^50";
  }
  if (element_count(shape) > kMaxTensorElements) return shape_to_string(shape) + " holds over 2^62 elements";
  return {};
}

namespace {
struct DtypeInfo {
  const char* name;
  double size;
  bool is_float;
};

// Indexed by onnx::TensorProto::DataType; 17-23 are the float8 and 4-bit types of ONNX >= 1.14,
// whose values survive parsing because the proto stores dtypes as int32.
const DtypeInfo kDtypes[] = {
    {"undefined", 0, false}, {"float32", 4, true},  {"uint8", 1, false},      {"int8", 1, false},
    {"uint16", 2, false},    {"int16", 2, false},   {"int32", 4, false},      {"int64", 8, false},
    {"string", 0, false},    {"bool", 1, false},    {"float16", 2, true},     {"float64", 8, true},
    {"uint32", 4, false},    {"uint64", 8, false},  {"complex64", 8, true},   {"complex128", 16, true},
    {"bfloat16", 2, true},   {"float8e4m3fn", 1, true}, {"float8e4m3fnuz", 1, true},
    {"float8e5m2", 1, true}, {"float8e5m2fnuz", 1, true}, {"uint4", 0.5, false}, {"int4", 0.5, false},
    {"float4e2m1", 0.5, true},
};
const DtypeInfo& info(int32_t dtype) {
  if (dtype < 0 || dtype >= static_cast<int32_t>(sizeof(kDtypes) / sizeof(kDtypes[0]))) return kDtypes[0];
  return kDtypes[dtype];
}
}  // namespace

double dtype_size(int32_t dtype) { return info(dtype).size; }
const char* dtype_name(int32_t dtype) { return info(dtype).name; }
bool dtype_is_float(int32_t dtype) { return info(dtype).is_float; }

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace modelcost
