// Tensor metadata that flows through the pipeline: dtype, concrete shape, and (for small
// tensors) folded contents, which is what lets shape computations like Shape->Gather->Concat
// resolve to concrete numbers.
#pragma once
#include <cstdint>
#include <climits>
#include <memory>
#include <string>
#include <vector>

namespace onnx { class TensorProto; class TypeProto; }

namespace modelcost {

using Shape = std::vector<int64_t>;

// Contents of a small tensor known at analysis time (an initializer, a Constant, or a folded
// shape computation). Integer and bool dtypes live in `ints`, floating dtypes in `floats`.
struct TensorValue {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool is_float = false;

  size_t size() const { return is_float ? floats.size() : ints.size(); }
  double as_double(size_t i) const { return is_float ? floats[i] : static_cast<double>(ints[i]); }
  // Floats truncate toward zero, saturating at the int64 range (NaN reads 0); rules that need
  // an exact integer use value_as_ints or require_ints, which refuse such values.
  int64_t as_int(size_t i) const { return is_float ? saturating_int(floats[i]) : ints[i]; }
  static int64_t saturating_int(double x) {
    if (!(x == x)) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x < -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(x);
  }
};

struct TensorInfo {
  std::string name;
  int32_t dtype = 0;            // onnx::TensorProto::DataType; 0 = not known
  Shape shape;
  bool has_shape = false;
  bool estimate = false;        // upper bound of a data-dependent size
  bool is_initializer = false;
  bool is_graph_input = false;
  const onnx::TensorProto* initializer = nullptr;  // owned by the loaded model
  std::shared_ptr<const TensorValue> value;        // known contents, small tensors only
  const onnx::TypeProto* declared = nullptr;       // type the file declares (value_info, outputs)
};

// Tensors up to this many elements have their contents tracked through folding.
constexpr size_t kMaxFoldedElements = 1 << 16;

// Largest dim a tensor may have: 2^50 (about 10^15) is far above any real dim and keeps sums
// and products of two dims inside int64. Larger shapes are reported as errors, not analysed.
constexpr int64_t kMaxTensorDim = int64_t{1} << 50;
// Largest element count (2^62): products of a tensor's dims stay inside int64.
constexpr double kMaxTensorElements = 4611686018427387904.0;
// Empty when the rank is at most 64, every dim in [0, kMaxTensorDim] and the element count at
// most kMaxTensorElements; else what is wrong, e.g. "dim -3 in [2,-3] is negative".
std::string shape_limit_violation(const Shape& shape);

// Number of elements as a double: products of large dims never wrap.
double element_count(const Shape& shape);
// True where `view` is another view of rows [M, C]: as many elements, its last dim C (a Flatten
// and a Reshape back around a per-channel op over the rows). Rows equal to the view are not "another".
bool is_rows_view(const Shape& rows, const Shape& view);
// Bytes per element of an ONNX dtype (0.5 for 4-bit types, 0 when unknown).
double dtype_size(int32_t dtype);
// Short lowercase name ("float32", "int64", ...).
const char* dtype_name(int32_t dtype);
bool dtype_is_float(int32_t dtype);
std::string shape_to_string(const Shape& shape);

}  // namespace modelcost
