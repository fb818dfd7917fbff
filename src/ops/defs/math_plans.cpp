// Plans of the math family's row and matrix ops: Softmax / LogSoftmax, CumSum, TopK, MatMul and Gemm
// (the elementwise rows name plan_elementwise). The rows of math.cpp name them.
#include "ops/plan_helpers.h"

namespace modelcost {

OpPlan plan_softmax(const OpContext& c) {
  if (!float_data(c)) return unsupported(c.node().op_type + " on non-float tensors");
  const Shape& in = c.in_shape(0);
  if (in.empty()) return unsupported(c.node().op_type + " of a scalar");
  SoftmaxPlan p;
  p.log_softmax = c.node().op_type == "LogSoftmax";
  if (c.opset() >= 13) {
    const int64_t axis = c.axis(c.attr_int("axis", -1), in.size());
    static_cast<RowView&>(p) = row_view(in, axis, axis);
  } else {  // before opset 13 the input is coerced to 2-D at axis
    const int64_t axis = c.axis(c.attr_int("axis", 1), in.size());
    static_cast<RowView&>(p) = row_view(in, axis, static_cast<int64_t>(in.size()) - 1);
  }
  return p;
}

OpPlan plan_cumsum(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  double axis = 0;
  if (!known_scalar(c, 1, &axis)) return unsupported("CumSum axis not known at analysis time");
  if (in.empty()) return unsupported("CumSum of a scalar");
  const int64_t a = c.axis(static_cast<int64_t>(axis), in.size());
  ScanPlan p;
  static_cast<RowView&>(p) = row_view(in, a, a);
  p.exclusive = c.attr_int("exclusive", 0) != 0;
  p.reverse = c.attr_int("reverse", 0) != 0;
  return p;
}

OpPlan plan_topk(const OpContext& c) {
  if (!dtype_is_float(c.in_dtype(0))) return unsupported("TopK of non-float data");
  const Shape& in = c.in_shape(0);
  if (in.empty()) return unsupported("TopK of a scalar");
  const int64_t axis = c.axis(c.attr_int("axis", -1), in.size());
  TopKPlan p;
  static_cast<RowView&>(p) = row_view(in, axis, axis);
  if (p.inner != 1) return unsupported("TopK along an axis other than the last");
  p.k = c.out(0).shape[static_cast<size_t>(axis)];
  p.largest = c.attr_int("largest", 1) != 0;
  return p;
}

OpPlan plan_matmul(const OpContext& c) {
  if (!float_data(c) || !dtype_is_float(c.in_dtype(1))) return unsupported("MatMul on non-float tensors");
  return matmul_plan(c.in_shape(0), c.in_shape(1));
}

OpPlan plan_gemm(const OpContext& c) {
  if (!float_data(c) || !dtype_is_float(c.in_dtype(1))) return unsupported("Gemm on non-float tensors");
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (a.size() != 2 || b.size() != 2) return unsupported("Gemm inputs not 2-D");
  MatMulParams m;
  m.trans_a = c.attr_int("transA", 0) != 0;
  m.trans_b = c.attr_int("transB", 0) != 0;
  m.m = m.trans_a ? a[1] : a[0];
  m.k = m.trans_a ? a[0] : a[1];
  m.n = m.trans_b ? b[0] : b[1];
  m.alpha = c.attr_float("alpha", 1.0f);
  if (c.has_input(2)) {
    m.beta = c.attr_float("beta", 1.0f);
    const Shape& bias = c.in_shape(2);
    const double n = element_count(bias);
    if (n == 1) m.bias = MatMulParams::Bias::kScalar;
    else if (bias.back() == m.n && n == m.n) m.bias = MatMulParams::Bias::kRow;
    else if (n == m.m && bias.size() == 2 && bias[1] == 1) m.bias = MatMulParams::Bias::kColumn;
    else if (n == m.m * m.n) m.bias = MatMulParams::Bias::kFull;
    else return unsupported("Gemm bias of shape " + shape_to_string(bias));
  }
  return m;
}

}  // namespace modelcost
