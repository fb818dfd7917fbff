// Op rules: math family (ai.onnx): arithmetic, elementary functions, activations, matrix
// products, softmax. Formulas: docs/ops/math.md.
#include <algorithm>
#include <cmath>
#include <map>

#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

// ---- arithmetic with folding of small known tensors (shape computations) ----
void infer_add(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, [](double a, double b) { return a + b; }, checked_add);
}
void infer_sub(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, [](double a, double b) { return a - b; }, checked_sub);
}
void infer_mul(OpContext& c) {
  infer_broadcast(c);
  fold_binary(c, [](double a, double b) { return a * b; }, checked_mul);
}
void infer_div(OpContext& c) {
  infer_broadcast(c);
  // Integer Div truncates toward zero (ONNX follows C semantics); a zero divisor leaves the value unknown.
  const TensorValue* b = c.value(1);
  if (b && !b->is_float)
    for (int64_t x : b->ints) if (x == 0) return;
  fold_binary(c, [](double a, double b) { return a / b; }, checked_div);
}
void infer_mod(OpContext& c) {
  infer_broadcast(c);
  const TensorValue* b = c.value(1);
  if (b && !b->is_float)
    for (int64_t x : b->ints) if (x == 0) return;
  const bool fmod = c.attr_int("fmod", 0) != 0;
  fold_binary(c, [](double a, double b) { return std::fmod(a, b); },
              [fmod](int64_t a, int64_t b) {
                if (b == 0 || (a == INT64_MIN && b == -1)) throw Unfoldable{};
                int64_t r = a % b;
                if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;  // Python-style sign of the divisor
                return r;
              });
}
void infer_pow(OpContext& c) {
  infer_broadcast(c);
  // Pow(int, float) keeps the int dtype; the integer path would truncate the exponent first.
  if (c.value(0) && c.value(1) && !c.value(0)->is_float && c.value(1)->is_float) return;
  fold_binary(c, [](double a, double b) { return std::pow(a, b); },
              [](int64_t a, int64_t b) { return checked_int(std::pow(a, b)); });
}
template <double (*F)(double)>
void infer_unary_folded(OpContext& c) {
  infer_unary(c);
  fold_unary(c, F, nullptr);
}
double f_neg(double x) { return -x; }
double f_abs(double x) { return std::fabs(x); }
double f_sqrt(double x) { return std::sqrt(x); }
double f_reciprocal(double x) { return 1.0 / x; }
double f_floor(double x) { return std::floor(x); }
double f_ceil(double x) { return std::ceil(x); }
double f_round(double x) { return std::nearbyint(x); }  // ties to even, as ONNX specifies
double f_exp(double x) { return std::exp(x); }
double f_log(double x) { return std::log(x); }
double f_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
double f_relu(double x) { return x > 0 ? x : 0; }
void infer_neg(OpContext& c) {
  infer_unary(c);
  fold_unary(c, f_neg, checked_neg);
}
void infer_abs(OpContext& c) {
  infer_unary(c);
  fold_unary(c, f_abs, [](int64_t x) { return x < 0 ? checked_neg(x) : x; });
}

// Variadic Max/Min/Sum/Mean broadcast all inputs; Max/Min fold (used on shapes).
void infer_max(OpContext& c) {
  infer_broadcast(c);
  if (c.num_inputs() == 2)
    fold_binary(c, [](double a, double b) { return std::max(a, b); }, [](int64_t a, int64_t b) { return std::max(a, b); });
  else if (c.num_inputs() == 1 && c.value(0))
    c.set_value(0, c.shared_value(0));
}
void infer_min(OpContext& c) {
  infer_broadcast(c);
  if (c.num_inputs() == 2)
    fold_binary(c, [](double a, double b) { return std::min(a, b); }, [](int64_t a, int64_t b) { return std::min(a, b); });
  else if (c.num_inputs() == 1 && c.value(0))
    c.set_value(0, c.shared_value(0));
}
void infer_clip(OpContext& c) {
  infer_unary(c);
  if (!c.value(0)) return;
  // min/max from attributes (opset < 11) or optional inputs 1 and 2.
  double lo = -INFINITY, hi = INFINITY;
  if (c.opset() < 11) {
    lo = c.attr_float("min", -INFINITY);
    hi = c.attr_float("max", INFINITY);
  } else {
    if (c.has_input(1)) { if (!c.value(1) || !c.value(1)->size()) return; lo = c.value(1)->as_double(0); }
    if (c.has_input(2)) { if (!c.value(2) || !c.value(2)->size()) return; hi = c.value(2)->as_double(0); }
  }
  fold_unary(c, [lo, hi](double x) { return std::min(std::max(x, lo), hi); },
             [lo, hi](int64_t x) { return checked_int(std::min(std::max(double(x), lo), hi)); });
}

// Variadic ops: one flop per input beyond the first, per output element; Mean adds the divide.
OpCost cost_variadic(const OpContext& c) {
  OpCost cost;
  if (!computes_in_float(c)) return cost;
  size_t present = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) present += c.has_input(i);
  const double n = element_count(c.out(0).shape);
  cost.flops = n * (present > 0 ? present - 1 : 0) + (c.node().op_type == "Mean" ? n : 0);
  return cost;
}

// Gelu (opset 20): erf form 5 flops/element, tanh approximation 9.
OpCost cost_gelu(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c))
    cost.flops = (c.attr_string("approximate", "none") == "tanh" ? 9 : 5) * element_count(c.out(0).shape);
  return cost;
}

// ---- matrix products ----
struct MatMulDims {
  double batch = 1, m = 1, n = 1, k = 1;
};

// numpy.matmul: 1-D operands are promoted (and the added dim dropped), batch dims broadcast.
Shape matmul_shape(const OpContext& c, const Shape& a, const Shape& b, MatMulDims* dims) {
  if (a.empty() || b.empty()) c.fail("MatMul operands must have rank >= 1");
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  const int64_t k = a2.back();
  if (k != b2[b2.size() - 2])
    c.fail("inner dims differ: " + shape_to_string(a) + " x " + shape_to_string(b));
  Shape batch_a(a2.begin(), a2.end() - 2), batch_b(b2.begin(), b2.end() - 2);
  Shape out = broadcast_shapes(batch_a, batch_b, c);
  if (dims) {
    dims->batch = element_count(out);
    dims->m = static_cast<double>(a2[a2.size() - 2]);
    dims->n = static_cast<double>(b2.back());
    dims->k = static_cast<double>(k);
  }
  if (a.size() != 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() != 1) out.push_back(b2.back());
  return out;
}

void infer_matmul(OpContext& c) { c.set_output(0, c.in_dtype(0), matmul_shape(c, c.in_shape(0), c.in_shape(1), nullptr)); }

OpCost cost_matmul(const OpContext& c) {
  MatMulDims d;
  matmul_shape(c, c.in_shape(0), c.in_shape(1), &d);
  OpCost cost;
  cost.macs = d.batch * d.m * d.n * d.k;
  cost.flops = 2 * cost.macs;
  return cost;
}

void gemm_dims(const OpContext& c, int64_t* m, int64_t* n, int64_t* k) {
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (a.size() != 2 || b.size() != 2) c.fail("Gemm needs 2-D A and B, got " + shape_to_string(a) + " and " + shape_to_string(b));
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  *m = ta ? a[1] : a[0];
  *k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0];
  *n = tb ? b[0] : b[1];
  if (*k != kb) c.fail("inner dims differ: A " + shape_to_string(a) + " B " + shape_to_string(b));
}

void infer_gemm(OpContext& c) {
  int64_t m, n, k;
  gemm_dims(c, &m, &n, &k);
  if (c.has_input(2)) broadcast_shapes({m, n}, c.in_shape(2), c);  // C must broadcast to [M, N]
  c.set_output(0, c.in_dtype(0), {m, n});
}

OpCost cost_gemm(const OpContext& c) {
  int64_t m, n, k;
  gemm_dims(c, &m, &n, &k);
  OpCost cost;
  cost.macs = double(m) * double(n) * double(k);
  const double mn = double(m) * double(n);
  cost.flops = 2 * cost.macs;
  if (c.attr_float("alpha", 1.f) != 1.f) cost.flops += mn;
  if (c.has_input(2)) cost.flops += mn * (c.attr_float("beta", 1.f) != 1.f ? 2 : 1);
  return cost;
}

// ---- softmax family, TopK, CumSum, Det ----
OpCost cost_softmax(const OpContext& c) {
  // max, subtract, exp, sum, divide per element (LogSoftmax: log of the sum and subtract instead).
  OpCost cost;
  cost.flops = 5 * element_count(c.in_shape(0));
  return cost;
}

void infer_softmax(OpContext& c) {
  const int64_t default_axis = c.opset() < 13 ? 1 : -1;
  c.axis(c.attr_int("axis", default_axis), c.in_rank(0));
  infer_unary(c);
}

void infer_topk(OpContext& c) {
  Shape out = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", -1), out.size());
  bool estimate = false;
  int64_t k;
  if (c.opset() < 10) {
    k = c.attr_int("k", -1);
  } else if (const TensorValue* v = c.value(1); v && v->size() == 1) {
    k = v->as_int(0);
  } else {
    k = out[axis];  // data-dependent k: at most the whole axis
    estimate = true;
  }
  if (k < 0 || k > out[axis]) c.fail("k = " + std::to_string(k) + " is outside [0, " + std::to_string(out[axis]) + "]");
  out[axis] = k;
  c.set_output(0, c.in_dtype(0), out, estimate);
  c.set_output(1, 7 /* INT64 */, out, estimate);
}

OpCost cost_topk(const OpContext& c) {
  // A heap selection: each input element compares against log2(k) heap levels.
  const int64_t k = std::max<int64_t>(c.out(0).shape.empty() ? 1 : c.out(0).shape[c.axis(c.attr_int("axis", -1), c.out(0).shape.size())], 1);
  OpCost cost;
  if (computes_in_float(c)) cost.flops = element_count(c.in_shape(0)) * std::max(1.0, std::ceil(std::log2(double(k) + 1)));
  return cost;
}

void infer_det(OpContext& c) {
  const Shape& in = c.in_shape(0);
  if (in.size() < 2 || in[in.size() - 1] != in[in.size() - 2]) c.fail("Det needs square matrices, got " + shape_to_string(in));
  c.set_output(0, c.in_dtype(0), Shape(in.begin(), in.end() - 2));
}

OpCost cost_det(const OpContext& c) {
  // LU factorisation: about 2/3 n^3 flops per matrix.
  const Shape& in = c.in_shape(0);
  const double n = static_cast<double>(in.back());
  OpCost cost;
  cost.flops = element_count(Shape(in.begin(), in.end() - 2)) * 2.0 / 3.0 * n * n * n;
  return cost;
}

// Radix-2 FFT: 5 N log2 N flops per complex transform of length N, i.e. 5 log2 N per complex
// output; a onesided (real-input) transform writes about N/2 outputs and costs about half.
double fft_flops(double complex_outputs, double n) { return complex_outputs * 5 * std::max(1.0, std::log2(std::max(n, 2.0))); }

OpCost cost_dft(const OpContext& c) {
  const Shape& in = c.in_shape(0);
  if (in.size() < 2) return {};
  int64_t axis = c.opset() >= 20 ? -2 : c.attr_int("axis", 1);
  if (c.opset() >= 20 && c.value(2)) axis = c.value(2)->as_int(0);
  axis = c.axis(axis, in.size());
  // Transform length: dft_length when known, else the signal's length along the axis.
  const TensorValue* length = c.value(1);
  const double n = length && length->size() == 1 ? length->as_double(0) : static_cast<double>(in[axis]);
  OpCost cost;
  cost.flops = fft_flops(element_count(c.out(0).shape) / 2, n);
  return cost;
}

// STFT (opset 17): signal [batch, length, 1 or 2], frame_step, optional window, optional
// frame_length -> [batch, frames, bins, 2]. Own rule: ONNX 1.12's ignores onesided's default of 1.
int64_t stft_frame_length(const OpContext& c) {
  if (const TensorValue* v = c.value(3); v && v->size() == 1) return v->as_int(0);
  if (c.has_input(2) && c.in_rank(2) == 1) return c.in_shape(2)[0];
  throw NotInferable("STFT frame_length is not known at analysis time");
}

void infer_stft(OpContext& c) {
  const Shape& in = c.in_shape(0);
  if (in.size() != 3) c.fail("STFT needs a [batch, length, 1 or 2] signal, got " + shape_to_string(in));
  const std::vector<int64_t> step = c.require_ints(1, "frame_step");
  const int64_t frame = stft_frame_length(c);
  if (step.size() != 1 || step[0] <= 0 || frame <= 0 || frame > in[1])
    c.fail("frame_step and frame_length must be positive and the frame no longer than the signal " + shape_to_string(in));
  const int64_t frames = (in[1] - frame) / step[0] + 1;
  const int64_t bins = c.attr_int("onesided", 1) != 0 ? frame / 2 + 1 : frame;
  c.set_output(0, c.in_dtype(0), {in[0], frames, bins, 2});
}

OpCost cost_stft(const OpContext& c) {
  OpCost cost;
  cost.flops = fft_flops(element_count(c.out(0).shape) / 2, static_cast<double>(stft_frame_length(c)));
  return cost;
}

// Window and mel-matrix generators read integer sizes and write floats: flops per float output.
template <int K>
OpCost cost_per_float_output(const OpContext& c) {
  OpCost cost;
  if (dtype_is_float(c.out(0).dtype)) cost.flops = K * element_count(c.out(0).shape);
  return cost;
}

// ---- losses ----
// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: per-target output with reduction "none",
// else a scalar; SoftmaxCrossEntropyLoss's optional second output is the log-probabilities.
void infer_loss(OpContext& c) {
  const Shape& scores = c.in_shape(0);
  const Shape& target = c.in_shape(1);
  bool matches = scores.size() >= 2 && target.size() + 1 == scores.size() && target[0] == scores[0];
  for (size_t d = 1; matches && d < target.size(); ++d) matches = target[d] == scores[d + 1];
  if (!matches)
    c.fail("scores " + shape_to_string(scores) + " and target " + shape_to_string(target) + " do not match ([N, C, ...] and [N, ...])");
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "mean" && reduction != "sum") c.fail("unknown reduction '" + reduction + "'");
  c.set_output(0, c.in_dtype(0), reduction == "none" ? target : Shape{});
  c.set_output(1, c.in_dtype(0), scores);
}

// NLL: a weighted pick and a sum per target element (2 flops).
OpCost cost_nll_loss(const OpContext& c) {
  OpCost cost;
  cost.flops = 2 * element_count(c.in_shape(1));
  return cost;
}

// Softmax (5 flops) and log (1) per score, then the NLL (2 per target).
OpCost cost_softmax_cross_entropy(const OpContext& c) {
  OpCost cost;
  cost.flops = 6 * element_count(c.in_shape(0)) + 2 * element_count(c.in_shape(1));
  return cost;
}

}  // namespace

// Einsum's rules and plan (math_einsum.cpp).
void infer_einsum(OpContext& c);
OpCost cost_einsum(const OpContext& c);
OpPlan plan_einsum(const OpContext& c);

// Measurement plans of math_plans.cpp.
OpPlan plan_softmax(const OpContext& c);
OpPlan plan_cumsum(const OpContext& c);
OpPlan plan_topk(const OpContext& c);
OpPlan plan_matmul(const OpContext& c);
OpPlan plan_gemm(const OpContext& c);

void register_math_ops(OpRegistry& r) {
  r.add(OpForm::kGemm, {
      {"", "MatMul", infer_matmul, cost_matmul, plan_matmul},
      {"", "Gemm", infer_gemm, cost_gemm, plan_gemm},
  });
  r.add(OpTraits(OpForm::kGemm).with_free_dim_order(), {
      {"", "Einsum", infer_einsum, cost_einsum, plan_einsum},
  });
  // What cuDNN's fused conv call takes after the conv: the bias or residual add, the ReLU, a scale.
  r.add(OpTraits(OpForm::kPointwise).with_conv_epilogue().with_epilogue_add(), {
      {"", "Add", infer_add, cost_per_output<1>, plan_elementwise},
  });
  r.add(OpTraits(OpForm::kPointwise).with_conv_epilogue(), {
      {"", "Sub", infer_sub, cost_per_output<1>, plan_elementwise},
  });
  r.add(OpTraits(OpForm::kPointwise).with_conv_epilogue().with_epilogue_scale(), {
      {"", "Mul", infer_mul, cost_per_output<1>, plan_elementwise},
  });
  r.add(OpTraits(OpForm::kPointwise).with_conv_epilogue().with_epilogue_activation(), {
      {"", "Relu", infer_unary_folded<f_relu>, cost_per_output<1>, plan_elementwise},
  });
  r.add(OpForm::kPointwise, {
      {"", "Div", infer_div, cost_per_output<1>, plan_elementwise},
      {"", "Mod", infer_mod, cost_per_output<1>, plan_elementwise},
      {"", "Pow", infer_pow, cost_per_output<1>, plan_elementwise},
      {"", "Neg", infer_neg, cost_per_output<1>, plan_elementwise},
      {"", "Abs", infer_abs, cost_per_output<1>, plan_elementwise},
      {"", "Sign", infer_unary_folded<f_sign>, cost_per_output<1>, plan_elementwise},
      {"", "Reciprocal", infer_unary_folded<f_reciprocal>, cost_per_output<1>, plan_elementwise},
      {"", "Sqrt", infer_unary_folded<f_sqrt>, cost_per_output<1>, plan_elementwise},
      {"", "Floor", infer_unary_folded<f_floor>, cost_per_output<1>, plan_elementwise},
      {"", "Ceil", infer_unary_folded<f_ceil>, cost_per_output<1>, plan_elementwise},
      {"", "Round", infer_unary_folded<f_round>, cost_per_output<1>, plan_elementwise},
      {"", "Exp", infer_unary_folded<f_exp>, cost_per_output<1>, plan_elementwise},
      {"", "Log", infer_unary_folded<f_log>, cost_per_output<1>, plan_elementwise},
      // Elementary functions: one flop each (one SFU instruction or library call).
      {"", "Sin", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Cos", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Tan", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Asin", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Acos", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Atan", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Sinh", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Cosh", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Asinh", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Acosh", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Atanh", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Erf", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Tanh", infer_unary, cost_per_output<1>, plan_elementwise},
      // Activations: the arithmetic of the defining formula.
      {"", "Sigmoid", infer_unary, cost_per_output<4>, plan_elementwise},          // 1 / (1 + exp(-x))
      {"", "HardSigmoid", infer_unary, cost_per_output<4>, plan_elementwise},      // max(0, min(1, a x + b))
      {"", "HardSwish", infer_unary, cost_per_output<5>, plan_elementwise},        // x * hardsigmoid(x)
      {"", "LeakyRelu", infer_unary, cost_per_output<2>, plan_elementwise},
      {"", "PRelu", infer_broadcast, cost_per_output<2>, plan_elementwise},
      {"", "Elu", infer_unary, cost_per_output<3>, plan_elementwise},
      {"", "Selu", infer_unary, cost_per_output<4>, plan_elementwise},
      {"", "Celu", infer_unary, cost_per_output<4>, plan_elementwise},
      {"", "ThresholdedRelu", infer_unary, cost_per_output<1>, plan_elementwise},
      {"", "Softplus", infer_unary, cost_per_output<3>, plan_elementwise},         // log(exp(x) + 1)
      {"", "Softsign", infer_unary, cost_per_output<3>, plan_elementwise},         // x / (1 + |x|)
      {"", "Mish", infer_unary, cost_per_output<5>, plan_elementwise, inputs(1, 1)},  // x * tanh(softplus(x))
      {"", "Gelu", infer_unary, cost_gelu, plan_elementwise, inputs(1, 1)},
      {"", "Shrink", infer_unary, cost_per_output<2>, plan_elementwise},
      {"", "Max", infer_max, cost_variadic, plan_elementwise},
      {"", "Min", infer_min, cost_variadic, plan_elementwise},
      {"", "Sum", infer_broadcast, cost_variadic, plan_elementwise},
      {"", "Mean", infer_broadcast, cost_variadic, plan_elementwise},
  });
  // ReLU6 as a library epilogue's activation.
  r.add(OpTraits(OpForm::kPointwise).with_epilogue_activation(), {
      {"", "Clip", infer_clip, cost_per_output<2>, plan_elementwise},
  });
  r.add(OpTraits(OpForm::kReduction).with_row_program(), {
      {"", "Softmax", infer_softmax, cost_softmax, plan_softmax},
      {"", "LogSoftmax", infer_softmax, cost_softmax, plan_softmax},
  });
  r.add(OpForm::kReduction, {
      {"", "Hardmax", infer_softmax, cost_per_output<1>, not_measured("no GPU kernel yet")},
      {"", "CumSum", infer_unary, cost_per_output<1>, plan_cumsum},
  });
  r.add(OpForm::kOther, {
      {"", "TopK", infer_topk, cost_topk, plan_topk},
      {"", "Det", infer_det, cost_det, not_measured("no GPU kernel yet")},
      {"", "DFT", infer_with_onnx_schema, cost_dft, not_measured("no GPU kernel yet")},
      {"", "STFT", infer_stft, cost_stft, not_measured("no GPU kernel yet")},
      {"", "HannWindow", infer_with_onnx_schema, cost_per_float_output<4>, not_measured("no GPU kernel yet")},
      {"", "HammingWindow", infer_with_onnx_schema, cost_per_float_output<4>, not_measured("no GPU kernel yet")},
      {"", "BlackmanWindow", infer_with_onnx_schema, cost_per_float_output<7>, not_measured("no GPU kernel yet")},
      {"", "MelWeightMatrix", infer_with_onnx_schema, cost_per_float_output<4>, not_measured("no GPU kernel yet")},
      {"", "NegativeLogLikelihoodLoss", infer_loss, cost_nll_loss, not_measured("training loss")},
      {"", "SoftmaxCrossEntropyLoss", infer_loss, cost_softmax_cross_entropy, not_measured("training loss")},
  });
}

}  // namespace modelcost
