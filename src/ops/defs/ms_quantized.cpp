// com.microsoft quantized ops beyond the QLinear elementwise, conv and matmul forms of
// quantization.cpp: QLinearWhere, QLinearReduceMean and the integer helpers ORT's quantizer writes.
#include <onnx/onnx_pb.h>

#include <set>

#include "ops/defs/fused_helpers.h"

namespace modelcost {
namespace {

// Reduced shape over the `axes` attribute (all axes when absent), keeping them as 1 with keepdims.
Shape reduced_shape(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  std::set<int64_t> axes;
  for (int64_t a : c.attr_ints("axes")) axes.insert(c.axis(a, x.size()));
  const bool keep = c.attr_int("keepdims", 1) != 0;
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool reduced = axes.empty() || axes.count(static_cast<int64_t>(i));
    if (!reduced) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

// QLinearReduceMean(data, data_scale, data_zero_point, reduced_scale, reduced_zero_point).
void infer_qlinear_reduce_mean(OpContext& c) { c.set_output(0, c.in_dtype(0), reduced_shape(c)); }

OpCost cost_qlinear_reduce_mean(const OpContext& c) {
  OpCost cost;  // dequantize and add each input, divide and requantize each output
  cost.flops = (kDequantizeFlops + 1) * element_count(c.in_shape(0)) + (1 + kQuantizeFlops) * output_elements(c);
  return cost;
}

// QLinearWhere(condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point).
void infer_qlinear_where(OpContext& c) {
  c.set_output(0, c.in_dtype(1), broadcast_shapes(broadcast_shapes(c.in_shape(0), c.in_shape(1), c), c.in_shape(4), c));
}

OpCost cost_qlinear_where(const OpContext& c) {
  OpCost cost;  // requantize the selected value into the output's scale
  cost.flops = (kDequantizeFlops + kQuantizeFlops) * output_elements(c);
  return cost;
}

// MulInteger(A, A_zero_point, B, B_zero_point) -> int32; integer arithmetic counts no flops.
void infer_mul_integer(OpContext& c) {
  c.set_output(0, onnx::TensorProto::INT32, broadcast_shapes(c.in_shape(0), c.in_shape(2), c));
}

void infer_reduce_sum_integer(OpContext& c) { c.set_output(0, onnx::TensorProto::INT32, reduced_shape(c)); }

}  // namespace

void register_ms_quantized_ops(OpRegistry& r) {
  constexpr std::string_view ms = "com.microsoft";
  r.add(OpForm::kPointwise, {
      {ms, "QLinearWhere", infer_qlinear_where, cost_qlinear_where, {}, inputs(9, 9)},
      {ms, "MulInteger", infer_mul_integer, cost_data_movement, {}, inputs(3, 4)},
  });
  r.add(OpForm::kReduction, {
      {ms, "QLinearReduceMean", infer_qlinear_reduce_mean, cost_qlinear_reduce_mean, {}, inputs(4, 5)},
      {ms, "ReduceSumInteger", infer_reduce_sum_integer, cost_data_movement, {}, inputs(1, 1)},
  });
}

}  // namespace modelcost
