// Op rules: logical family (ai.onnx): comparisons, boolean and bitwise ops, IsNaN/IsInf.
// Comparisons of floating tensors count one flop per element; boolean and integer bit
// operations are not floating-point work. Formulas: docs/ops/math.md (logical section).
#include <cmath>

#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

template <bool (*F)(double, double)>
void infer_compare(OpContext& c) {
  infer_broadcast_bool(c);
  fold_compare(c, F);
}
bool eq(double a, double b) { return a == b; }
bool lt(double a, double b) { return a < b; }
bool le(double a, double b) { return a <= b; }
bool gt(double a, double b) { return a > b; }
bool ge(double a, double b) { return a >= b; }

void infer_and(OpContext& c) {
  infer_broadcast_bool(c);
  fold_compare(c, [](double a, double b) { return a != 0 && b != 0; });
}
void infer_or(OpContext& c) {
  infer_broadcast_bool(c);
  fold_compare(c, [](double a, double b) { return a != 0 || b != 0; });
}
void infer_xor(OpContext& c) {
  infer_broadcast_bool(c);
  fold_compare(c, [](double a, double b) { return (a != 0) != (b != 0); });
}
void infer_not(OpContext& c) {
  infer_unary(c);
  fold_unary(c, nullptr, [](int64_t x) { return static_cast<int64_t>(x == 0); });
}
void infer_bitwise_and(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, nullptr, [](int64_t a, int64_t b) { return a & b; });
}
void infer_bitwise_or(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, nullptr, [](int64_t a, int64_t b) { return a | b; });
}
void infer_bitwise_xor(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, nullptr, [](int64_t a, int64_t b) { return a ^ b; });
}
void infer_bool_unary(OpContext& c) { c.set_output(0, 9 /* BOOL */, c.in_shape(0)); }

}  // namespace

void register_logical_ops(OpRegistry& r) {
  r.add(OpForm::kPointwise, {
      {"", "Equal", infer_compare<eq>, cost_per_output<1>, plan_elementwise},
      {"", "Less", infer_compare<lt>, cost_per_output<1>, plan_elementwise},
      {"", "LessOrEqual", infer_compare<le>, cost_per_output<1>, plan_elementwise},
      {"", "Greater", infer_compare<gt>, cost_per_output<1>, plan_elementwise},
      {"", "GreaterOrEqual", infer_compare<ge>, cost_per_output<1>, plan_elementwise},
      {"", "And", infer_and, cost_per_output<1>, plan_elementwise},
      {"", "Or", infer_or, cost_per_output<1>, plan_elementwise},
      {"", "Xor", infer_xor, cost_per_output<1>, plan_elementwise},
      {"", "Not", infer_not, cost_per_output<1>, plan_elementwise},
      {"", "BitShift", infer_broadcast, cost_per_output<1>, plan_elementwise},
      {"", "BitwiseAnd", infer_bitwise_and, cost_per_output<1>, plan_elementwise, inputs(2, 2)},
      {"", "BitwiseOr", infer_bitwise_or, cost_per_output<1>, plan_elementwise, inputs(2, 2)},
      {"", "BitwiseXor", infer_bitwise_xor, cost_per_output<1>, plan_elementwise, inputs(2, 2)},
      {"", "BitwiseNot", infer_unary, cost_per_output<1>, plan_elementwise, inputs(1, 1)},
      {"", "IsNaN", infer_bool_unary, cost_per_output<1>, plan_elementwise},
      {"", "IsInf", infer_bool_unary, cost_per_output<1>, plan_elementwise},
  });
}

}  // namespace modelcost
