// The elementwise operations measurement runs, one line each. The lists generate the
// ElementwiseOp enum, the ONNX op-type lookup (ops/defs/elementwise_plan.cpp), the CPU reference
// (cpu_reference.cpp) and the CUDA functors (elementwise.cu). Adding an elementwise op to
// measurement is one line here, and plan_elementwise named in its op rule row.
//
// Columns: enum name, ONNX op type ("" = a variant chosen by attributes, never looked up by
// name), FLOPs per output element (as the op table's cost rule counts them; a test checks),
// and the expression over inputs a, b, c of the computing type F (double on the host, float on
// the device) with the attribute parameters alpha and beta. The math helpers (exp_, erf_, ...)
// are defined for each side by the code that expands a list. Integer and bool tensors compute
// in F too (exact below 2^24 on the device); comparisons and logical ops return 0 or 1.
#pragma once
#include <cstdint>

// clang-format off
#define MC_UNARY_OPS(X)                                                                           \
  X(Identity, "Identity", 0, a)                                                                   \
  X(Relu, "Relu", 1, a > F(0) ? a : F(0))                                                         \
  X(Sigmoid, "Sigmoid", 4, F(1) / (F(1) + exp_(-a)))                                               \
  X(Tanh, "Tanh", 1, tanh_(a))                                                                    \
  X(Erf, "Erf", 1, erf_(a))                                                                       \
  X(Exp, "Exp", 1, exp_(a))                                                                       \
  X(Log, "Log", 1, log_(a))                                                                       \
  X(Sqrt, "Sqrt", 1, sqrt_(a))                                                                    \
  X(Neg, "Neg", 1, -a)                                                                            \
  X(Abs, "Abs", 1, fabs_(a))                                                                      \
  X(Reciprocal, "Reciprocal", 1, F(1) / a)                                                        \
  X(Sign, "Sign", 1, F(a > F(0)) - F(a < F(0)))                                                   \
  X(Floor, "Floor", 1, floor_(a))                                                                 \
  X(Ceil, "Ceil", 1, ceil_(a))                                                                    \
  X(Round, "Round", 1, rint_(a))                                                                  \
  X(Sin, "Sin", 1, sin_(a))                                                                       \
  X(Cos, "Cos", 1, cos_(a))                                                                       \
  X(Tan, "Tan", 1, tan_(a))                                                                       \
  X(Asin, "Asin", 1, asin_(a))                                                                    \
  X(Acos, "Acos", 1, acos_(a))                                                                    \
  X(Atan, "Atan", 1, atan_(a))                                                                    \
  X(Sinh, "Sinh", 1, sinh_(a))                                                                    \
  X(Cosh, "Cosh", 1, cosh_(a))                                                                    \
  X(Asinh, "Asinh", 1, asinh_(a))                                                                 \
  X(Acosh, "Acosh", 1, acosh_(a))                                                                 \
  X(Atanh, "Atanh", 1, atanh_(a))                                                                 \
  X(Gelu, "Gelu", 5, F(0.5) * a * (F(1) + erf_(a * F(0.70710678118654752))))                      \
  X(GeluTanh, "", 9, F(0.5) * a * (F(1) + tanh_(F(0.7978845608028654) * (a + F(0.044715) * a * a * a)))) \
  X(HardSigmoid, "HardSigmoid", 4, clamp_(alpha * a + beta, F(0), F(1)))                         \
  X(HardSwish, "HardSwish", 5, a * clamp_(a / F(6) + F(0.5), F(0), F(1)))                         \
  X(LeakyRelu, "LeakyRelu", 2, a >= F(0) ? a : alpha * a)                                         \
  X(Clip, "Clip", 2, clamp_(a, alpha, beta))                                                      \
  X(Softplus, "Softplus", 3, log1p_(exp_(a)))                                                     \
  X(Softsign, "Softsign", 3, a / (F(1) + fabs_(a)))                                               \
  X(Mish, "Mish", 5, a * tanh_(log1p_(exp_(a))))                                                  \
  X(Silu, "", 4, a / (F(1) + exp_(-a)))                                                           \
  X(Elu, "Elu", 3, a >= F(0) ? a : alpha * (exp_(a) - F(1)))                                      \
  X(Selu, "Selu", 4, a > F(0) ? beta * a : beta * alpha * (exp_(a) - F(1)))                       \
  X(Celu, "Celu", 4, a > F(0) ? a : alpha * (exp_(a / alpha) - F(1)))                             \
  X(ThresholdedRelu, "ThresholdedRelu", 1, a > alpha ? a : F(0))                                  \
  X(Shrink, "Shrink", 2, a < -beta ? a + alpha : (a > beta ? a - alpha : F(0)))                   \
  X(Not, "Not", 1, F(a == F(0)))                                                                  \
  X(IsNaN, "IsNaN", 1, F(a != a))                                                                 \
  X(IsInf, "IsInf", 1, F((alpha != F(0) && a > F(3.4e38)) || (beta != F(0) && a < F(-3.4e38))))   \
  X(BitwiseNot, "BitwiseNot", 1, F(~int_(a)))

#define MC_BINARY_OPS(X)                                                                          \
  X(Add, "Add", 1, a + b)                                                                         \
  X(Sub, "Sub", 1, a - b)                                                                         \
  X(Mul, "Mul", 1, a * b)                                                                         \
  X(Div, "Div", 1, a / b)                                                                         \
  X(Pow, "Pow", 1, pow_(a, b))                                                                    \
  X(Max, "Max", 1, a > b ? a : b)                                                                 \
  X(Min, "Min", 1, a < b ? a : b)                                                                 \
  X(PRelu, "PRelu", 2, a >= F(0) ? a : a * b)                                                     \
  X(Mod, "Mod", 1, a - floor_(a / b) * b)                                                         \
  X(FMod, "", 1, fmod_(a, b))                                                                     \
  X(Mean, "", 1, (a + b) * F(0.5))                                                                \
  X(Equal, "Equal", 1, F(a == b))                                                                 \
  X(Less, "Less", 1, F(a < b))                                                                    \
  X(LessOrEqual, "LessOrEqual", 1, F(a <= b))                                                     \
  X(Greater, "Greater", 1, F(a > b))                                                              \
  X(GreaterOrEqual, "GreaterOrEqual", 1, F(a >= b))                                               \
  X(And, "And", 1, F(a != F(0) && b != F(0)))                                                     \
  X(Or, "Or", 1, F(a != F(0) || b != F(0)))                                                       \
  X(Xor, "Xor", 1, F((a != F(0)) != (b != F(0))))                                                 \
  X(BitwiseAnd, "BitwiseAnd", 1, F(int_(a) & int_(b)))                                            \
  X(BitwiseOr, "BitwiseOr", 1, F(int_(a) | int_(b)))                                              \
  X(BitwiseXor, "BitwiseXor", 1, F(int_(a) ^ int_(b)))                                            \
  X(BitShiftLeft, "", 1, F(int_(a) << (int_(b) & 63)))                                            \
  X(BitShiftRight, "", 1, F(int_(a) >> (int_(b) & 63)))

#define MC_TERNARY_OPS(X) X(Where, "Where", 1, a != F(0) ? b : c)
// clang-format on

namespace modelcost {

#define MC_ENUM_ENTRY(name, onnx, flops, expr) k##name,
enum class ElementwiseOp : uint8_t { MC_UNARY_OPS(MC_ENUM_ENTRY) MC_BINARY_OPS(MC_ENUM_ENTRY) MC_TERNARY_OPS(MC_ENUM_ENTRY) };
#undef MC_ENUM_ENTRY

// How many inputs an operation reads (1, 2 or 3).
constexpr int elementwise_arity(ElementwiseOp op) {
  return op < ElementwiseOp::kAdd ? 1 : op < ElementwiseOp::kWhere ? 2 : 3;
}

}  // namespace modelcost
