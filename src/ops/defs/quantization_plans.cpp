// Measurement plans of the ai.onnx quantization ops: QuantizeLinear / DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul and QLinearConv. The rows of
// quantization.cpp name them. Integer data are int8 or uint8 (QuantizeLinear: 16-bit too).
#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

constexpr int32_t kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6;

bool byte_type(int32_t dtype) { return dtype == kUint8 || dtype == kInt8; }
bool quantized_type(int32_t dtype) { return byte_type(dtype) || dtype == kUint16 || dtype == kInt16; }
bool one_value(const OpContext& c, size_t i) { return !c.has_input(i) || element_count(c.in_shape(i)) == 1; }

}  // namespace

// Per tensor (a one-element scale) or per axis.
static OpPlan quantize_plan(const OpContext& c, bool dequantize) {
  if (c.attr_int("block_size", 0) > 0) return unsupported(c.node().op_type + " with blocked scales");
  const Shape& x = c.in_shape(0);
  QuantizePlan p;
  p.dequantize = dequantize;
  p.has_zero_point = c.has_input(2);
  if (one_value(c, 1)) {
    p.inner = extent_product(x, 0, x.size());
  } else {
    const int64_t axis = c.axis(c.attr_int("axis", 1), x.size());
    static_cast<RowView&>(p) = row_view(x, axis, axis);
  }
  return p;
}

OpPlan plan_quantize_linear(const OpContext& c) {
  if (!dtype_is_float(c.in_dtype(0))) return unsupported("QuantizeLinear of non-float data");
  if (!quantized_type(c.out(0).dtype)) return unsupported(std::string("QuantizeLinear to ") + dtype_name(c.out(0).dtype));
  return quantize_plan(c, false);
}

OpPlan plan_dequantize_linear(const OpContext& c) {
  if (!quantized_type(c.in_dtype(0)) && c.in_dtype(0) != kInt32)
    return unsupported(std::string("DequantizeLinear of ") + dtype_name(c.in_dtype(0)));
  return quantize_plan(c, true);
}

OpPlan plan_dynamic_quantize_linear(const OpContext& c) {
  if (!dtype_is_float(c.in_dtype(0))) return unsupported("DynamicQuantizeLinear of non-float data");
  return DynamicQuantizePlan{extent_product(c.in_shape(0), 0, c.in_rank(0))};
}

// The product of inputs a and b, both int8 or uint8.
static OpPlan integer_product(const OpContext& c, IntegerMatMulPlan p) {
  const int32_t a_type = c.in_dtype(static_cast<size_t>(p.a)), b_type = c.in_dtype(static_cast<size_t>(p.b));
  if (!byte_type(a_type) || !byte_type(b_type))
    return unsupported(c.node().op_type + " of " + dtype_name(a_type) + " and " + dtype_name(b_type));
  OpPlan gemm = matmul_plan(c.in_shape(static_cast<size_t>(p.a)), c.in_shape(static_cast<size_t>(p.b)));
  if (!std::holds_alternative<MatMulParams>(gemm)) return gemm;
  p.gemm = std::get<MatMulParams>(gemm);
  return p;
}

// Zero points per tensor, per row of A ([M]) or per column of B ([N]).
OpPlan plan_matmul_integer(const OpContext& c) {
  IntegerMatMulPlan p;
  const bool a_vector = c.has_input(2) && !one_value(c, 2), b_vector = c.has_input(3) && !one_value(c, 3);
  if ((a_vector && (c.in_rank(2) != 1 || c.in_rank(0) != 2)) || (b_vector && c.in_rank(3) != 1))
    return unsupported("MatMulInteger with zero points other than per tensor, row or column");
  p.a_zero_per_row = a_vector;
  p.b_zero_per_column = b_vector;
  if (!c.has_input(2)) p.a_zero = -1;
  if (!c.has_input(3)) p.b_zero = -1;
  return integer_product(c, p);
}

OpPlan plan_qlinear_matmul(const OpContext& c) {
  for (size_t i : {1, 2, 4, 5, 6, 7})
    if (!one_value(c, i)) return unsupported("QLinearMatMul with per-axis scales");
  if (!byte_type(c.out(0).dtype)) return unsupported(std::string("QLinearMatMul to ") + dtype_name(c.out(0).dtype));
  IntegerMatMulPlan p;
  p.a = 0;
  p.a_scale = 1;
  p.a_zero = 2;
  p.b = 3;
  p.b_scale = 4;
  p.b_zero = 5;
  p.y_scale = 6;
  p.y_zero = 7;
  return integer_product(c, p);
}

OpPlan plan_qlinear_conv(const OpContext& c) {
  if (!byte_type(c.in_dtype(0)) || !byte_type(c.in_dtype(3)) || !byte_type(c.out(0).dtype))
    return unsupported("QLinearConv of other than 8-bit integers");
  for (size_t i : {1, 2, 6, 7})
    if (!one_value(c, i)) return unsupported("QLinearConv with per-axis input or output scales");
  if (c.in_rank(0) > 5) return unsupported("QLinearConv of more than 3 spatial dims");
  QLinearConvPlan p;
  p.conv = conv_params(c, 0, 3, 8);
  p.per_channel_weight = !one_value(c, 4) || !one_value(c, 5);
  return p;
}

}  // namespace modelcost
