// Building blocks shared by the op family files: common shape rules (unary, broadcast,
// ONNX-schema fallback), common cost rules, and folding of small constant tensors.
#pragma once
#include <functional>

#include "ops/op_registry.h"

namespace modelcost {

// ---- shapes ----
// Numpy-style broadcast of two shapes; fails naming the node when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const OpContext& c);
// Output 0 = input 0 (dtype and shape). Unary elementwise ops.
void infer_unary(OpContext& c);
// Output 0 = broadcast of all present inputs, dtype of input 0.
void infer_broadcast(OpContext& c);
// Output 0 = broadcast of all inputs, dtype bool (comparisons, logical ops).
void infer_broadcast_bool(OpContext& c);
// Every output copies input 0 (Identity-like pass-through of dtype and shape).
void infer_passthrough(OpContext& c);
// Last ai.onnx opset whose schemas the ONNX library (1.12) holds; newer nodes use its latest.
constexpr int kOnnxLibraryMaxOpset = 17;
// ONNX 1.12's own inference function for the op (schema at min(opset, 17)); outputs it
// cannot resolve stay unshaped, and the engine falls back to the file's declared shapes.
void infer_with_onnx_schema(OpContext& c);

// ---- costs ----
// True when the node computes in a floating dtype (input 0's, else output 0's): integer and
// bool arithmetic (mostly shape computations) is not floating-point work and counts 0 flops.
bool computes_in_float(const OpContext& c);
// Elementwise op with K floating-point operations per output element.
template <int K>
OpCost cost_per_output(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c)) cost.flops = K * element_count(c.out(0).shape);
  return cost;
}
// K flops per element of input 0 (reductions read every element once).
template <int K>
OpCost cost_per_input(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c)) cost.flops = K * element_count(c.in(0).shape);
  return cost;
}
// Moves data but does no arithmetic (copies, gathers, concatenation).
OpCost cost_data_movement(const OpContext& c);
// Gathers and slices: read the selected elements of input 0 (as many as the output holds) and
// every other input (indices, starts/ends) in full, instead of the whole of input 0. An embedding
// lookup of 128 tokens reads 128 rows, not the table.
OpCost cost_selective_read(const OpContext& c);
// Reinterprets a buffer: no arithmetic, no bytes moved (Reshape, Squeeze, Identity, ...).
OpCost cost_reinterpret(const OpContext& c);

// ---- checked arithmetic ----
// A dim computed in double (sums and products of dims, scaled sizes): fails naming the node
// when it is not finite, negative or over kMaxTensorDim, instead of wrapping.
int64_t checked_dim(const OpContext& c, double value, const char* what);
// a * b and a + b of dims and attribute-derived counts (heads, block sizes, groups), exact:
// fails naming the node and `what` when an operand is negative or the result passes
// kMaxTensorDim, and never prints the wrapped value.
int64_t dim_product(const OpContext& c, int64_t a, int64_t b, const char* what);
int64_t dim_sum(const OpContext& c, int64_t a, int64_t b, const char* what);
// Thrown by folding arithmetic whose exact result an int64 cannot hold (overflow, a zero
// divisor, INT64_MIN / -1, NaN or an out-of-range double): the output's contents stay unknown.
struct Unfoldable {};
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_sub(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_div(int64_t a, int64_t b);  // truncates toward zero
int64_t checked_neg(int64_t a);
// The int64 a double names, truncated toward zero; Unfoldable when NaN or out of range.
int64_t checked_int(double x);

// ---- folding of small tensors ----
// Applies fn elementwise (with broadcasting) when every input's contents are known and the
// output is small; sets output 0's value. Integer inputs use the int path, float the double path.
// A function that throws Unfoldable leaves the value unknown.
void fold_unary(OpContext& c, const std::function<double(double)>& f_float,
                const std::function<int64_t(int64_t)>& f_int);
void fold_binary(OpContext& c, const std::function<double(double, double)>& f_float,
                 const std::function<int64_t(int64_t, int64_t)>& f_int);
// Output dtype is bool: results stored as 0/1 ints.
void fold_compare(OpContext& c, const std::function<bool(double, double)>& f);
// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& shape);
// Reads the value of a tensor as a flat int vector (ints, or floats truncated); NotInferable
// when a float is NaN or outside int64.
std::vector<int64_t> value_as_ints(const TensorValue& v);
TensorValue make_int_value(std::vector<int64_t> ints);
TensorValue make_float_value(std::vector<double> floats);

}  // namespace modelcost
