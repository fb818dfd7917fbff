// Op rules: quantization family — QuantizeLinear / DequantizeLinear, the integer and QLinear forms
// of Conv and MatMul (ai.onnx), and the com.microsoft quantized ops (QLinear*, QGemm, QAttention,
// MatMulNBits, ...). Formulas: docs/ops/quantization.md.
//
// Integer products count as MACs like their float forms; flops = 2 x macs plus the float work of
// (de)quantization: kDequantizeFlops / kQuantizeFlops per element it touches. Quantized weights
// (non-float initializers) count in params through OpCost::quantized_weights.
#include <onnx/onnx_pb.h>

#include "ops/defs/attention_common.h"

namespace modelcost {
namespace {

constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

double elements_in(const OpContext& c, size_t i) { return c.has_input(i) ? element_count(c.in_shape(i)) : 0; }

// The weight at input i counts in params with its own element count.
void count_weight(const OpContext& c, OpCost& cost, size_t i) {
  if (c.has_input(i)) cost.quantized_weights.emplace_back(i, element_count(c.in_shape(i)));
}

// ---- QuantizeLinear / DequantizeLinear ----

// Scale shapes: a scalar (per tensor), a 1-D tensor of the axis' size (per axis), or since
// opset 21 a tensor of the input's rank with ceil(dim / block_size) along the axis (blocked).
void check_scale(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const Shape& s = c.in_shape(1);
  if (element_count(s) == 1 && s.size() <= 1) return;
  const int64_t axis = c.axis(c.attr_int("axis", 1), x.size());
  const int64_t block = c.attr_int("block_size", 0);
  if (block < 0) c.fail("block_size = " + std::to_string(block) + " must not be negative");
  if (block > 0) {
    const int64_t blocks = x[axis] / block + (x[axis] % block != 0);  // ceil, without adding to block
    if (s.size() != x.size() || s[axis] != blocks)
      c.fail("blocked scale " + shape_to_string(s) + " does not fit input " + shape_to_string(x) + " with block_size " +
             std::to_string(block));
    return;
  }
  if (s.size() != 1 || s[0] != x[axis])
    c.fail("per-axis scale " + shape_to_string(s) + " does not match axis " + std::to_string(axis) + " of " + shape_to_string(x));
}

void infer_quantize_linear(OpContext& c) {
  check_scale(c);
  int32_t dtype = kUint8;
  if (c.has_input(2)) dtype = c.in_dtype(2);
  else if (c.attr_int("output_dtype", 0) != 0) dtype = static_cast<int32_t>(c.attr_int("output_dtype", 0));
  c.set_output(0, dtype, c.in_shape(0));
}

OpCost cost_quantize_linear(const OpContext& c) {
  OpCost cost;
  cost.flops = kQuantizeFlops * elements_in(c, 0);
  return cost;
}

void infer_dequantize_linear(OpContext& c) {
  check_scale(c);
  c.set_output(0, c.in_dtype(1), c.in_shape(0));
}

OpCost cost_dequantize_linear(const OpContext& c) {
  OpCost cost;
  cost.flops = kDequantizeFlops * elements_in(c, 0);
  if (!dtype_is_float(c.in_dtype(0))) count_weight(c, cost, 0);  // QDQ models keep weights as int8 + DQ
  return cost;
}

void infer_dynamic_quantize_linear(OpContext& c) {
  c.set_output(0, kUint8, c.in_shape(0));
  c.set_output(1, kFloat, {});
  c.set_output(2, kUint8, {});
}

OpCost cost_dynamic_quantize_linear(const OpContext& c) {
  OpCost cost;
  cost.flops = (2 + kQuantizeFlops) * elements_in(c, 0);  // min and max, then quantize
  return cost;
}

// ---- integer and QLinear products ----

// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
void infer_qlinear_conv(OpContext& c) {
  const auto g = conv_geometry(c, c.in_shape(0), c.in_shape(3), c.attr_int("channels_last", 0) != 0);
  c.set_output(0, c.in_dtype(7), g.output);
}

OpCost cost_qlinear_conv(const OpContext& c) {
  OpCost cost;
  cost.macs = conv_geometry(c, c.in_shape(0), c.in_shape(3), c.attr_int("channels_last", 0) != 0).macs;
  cost.flops = 2 * cost.macs + kQuantizeFlops * output_elements(c);  // requantize each output
  count_weight(c, cost, 3);
  count_weight(c, cost, 8);  // the int32 bias, counted as QDQ models count it through its DequantizeLinear
  return cost;
}

void infer_conv_integer(OpContext& c) {
  c.set_output(0, kInt32, conv_geometry(c, c.in_shape(0), c.in_shape(1), false).output);
}

OpCost cost_conv_integer(const OpContext& c) {
  OpCost cost;
  cost.macs = conv_geometry(c, c.in_shape(0), c.in_shape(1), false).macs;
  cost.flops = 2 * cost.macs;
  count_weight(c, cost, 1);
  return cost;
}

// QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void infer_qlinear_matmul(OpContext& c) {
  c.set_output(0, c.in_dtype(7), matmul_shape(c, c.in_shape(0), c.in_shape(3)));
}

OpCost cost_qlinear_matmul(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  cost.flops = 2 * cost.macs + kQuantizeFlops * output_elements(c);
  count_weight(c, cost, 3);
  return cost;
}

void infer_matmul_integer(OpContext& c) { c.set_output(0, kInt32, matmul_shape(c, c.in_shape(0), c.in_shape(1))); }

OpCost cost_matmul_integer(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  cost.flops = 2 * cost.macs;
  count_weight(c, cost, 1);
  return cost;
}

// ---- com.microsoft elementwise QLinear ops: dequantize, compute, quantize per output element ----

void infer_qlinear_binary(OpContext& c) {
  c.set_output(0, c.in_dtype(0), broadcast_shapes(c.in_shape(0), c.in_shape(3), c));
}

template <int OpFlops, int Inputs>
OpCost cost_qlinear_elementwise(const OpContext& c) {
  OpCost cost;
  cost.flops = (Inputs * kDequantizeFlops + OpFlops + kQuantizeFlops) * output_elements(c);
  return cost;
}

void infer_qlinear_softmax(OpContext& c) {
  if (!c.has_attr("opset")) c.fail("attribute opset is required");
  c.set_output(0, c.in_dtype(0), c.in_shape(0));
}

// QLinearConcat: Y_scale, Y_zero_point, then (tensor, scale, zero point) per input.
void infer_qlinear_concat(OpContext& c) {
  if (c.num_inputs() < 5 || (c.num_inputs() - 2) % 3 != 0)
    c.fail("inputs must be Y_scale, Y_zero_point and (tensor, scale, zero point) triples, got " +
           std::to_string(c.num_inputs()));
  if (!c.has_attr("axis")) c.fail("attribute axis is required");
  Shape out = c.in_shape(2);
  const int64_t axis = c.axis(c.attr_int("axis", 0), out.size());
  for (size_t i = 5; i < c.num_inputs(); i += 3) {
    const Shape& s = c.in_shape(i);
    if (s.size() != out.size()) c.fail("inputs of different ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis && s[d] != out[d])
        c.fail("inputs " + shape_to_string(out) + " and " + shape_to_string(s) + " differ off the axis");
    out[axis] = checked_dim(c, static_cast<double>(out[axis]) + static_cast<double>(s[axis]), "the concatenated axis");
  }
  c.set_output(0, c.in_dtype(1), out);
}

OpCost cost_qlinear_concat(const OpContext& c) {
  OpCost cost;
  cost.flops = (kDequantizeFlops + kQuantizeFlops) * output_elements(c);  // requantize to Y's scale
  return cost;
}

void infer_qlinear_global_average_pool(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3");
  const bool channels_last = c.attr_int("channels_last", 0) != 0;
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[channels_last ? x.size() - 1 : 1] = channels_last ? x.back() : x[1];
  c.set_output(0, c.in_dtype(0), out);
}

OpCost cost_qlinear_global_average_pool(const OpContext& c) {
  OpCost cost;  // dequantize and sum every input; divide and quantize every output
  cost.flops = (kDequantizeFlops + 1) * elements_in(c, 0) + (1 + kQuantizeFlops) * output_elements(c);
  return cost;
}

void infer_qlinear_average_pool(OpContext& c) {
  double kernel = 0;
  c.set_output(0, c.in_dtype(0), pool_output_shape(c, c.in_shape(0), c.attr_int("channels_last", 0) != 0, &kernel));
}

OpCost cost_qlinear_average_pool(const OpContext& c) {
  double kernel = 0;
  pool_output_shape(c, c.in_shape(0), c.attr_int("channels_last", 0) != 0, &kernel);
  OpCost cost;  // dequantize every input; per output a window sum, a divide, a quantize
  cost.flops = kDequantizeFlops * elements_in(c, 0) + (kernel + 1 + kQuantizeFlops) * output_elements(c);
  return cost;
}

// ---- com.microsoft quantized products ----

// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point.
GemmGeometry qgemm_geometry(const OpContext& c) { return gemm_geometry_of_inputs(c, 0, 3); }

void infer_qgemm(OpContext& c) {
  const auto g = qgemm_geometry(c);
  c.set_output(0, c.has_input(8) ? c.in_dtype(8) : kFloat, {g.m, g.n});
}

OpCost cost_qgemm(const OpContext& c) {
  const auto g = qgemm_geometry(c);
  OpCost cost;
  const double outputs = static_cast<double>(g.m) * static_cast<double>(g.n);
  cost.macs = outputs * static_cast<double>(g.k);
  // Rescale each int32 accumulator to float; quantize it again when y_scale is given.
  cost.flops = 2 * cost.macs + outputs * (1 + (c.has_input(7) ? kQuantizeFlops : 0));
  count_weight(c, cost, 3);
  count_weight(c, cost, 6);  // bias C (int32, or float)
  return cost;
}

void infer_float_matmul_of_int(OpContext& c, int32_t dtype) {
  c.set_output(0, dtype, matmul_shape(c, c.in_shape(0), c.in_shape(1)));
}

// DynamicQuantizeMatMul: A (float), B (int8), b_scale, b_zero_point, bias.
void infer_dynamic_quantize_matmul(OpContext& c) { infer_float_matmul_of_int(c, c.in_dtype(0)); }

OpCost cost_dynamic_quantize_matmul(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  const double bias = c.has_input(4) ? 1 : 0;
  cost.flops = (2 + kQuantizeFlops) * elements_in(c, 0) + 2 * cost.macs + (1 + bias) * output_elements(c);
  count_weight(c, cost, 1);
  return cost;
}

// MatMulIntegerToFloat: A, B (int8), a_scale, b_scale, a_zero_point, b_zero_point, bias.
void infer_matmul_integer_to_float(OpContext& c) { infer_float_matmul_of_int(c, c.in_dtype(2)); }

OpCost cost_matmul_integer_to_float(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  const double bias = c.has_input(6) ? 1 : 0;
  cost.flops = 2 * cost.macs + (1 + bias) * output_elements(c);
  count_weight(c, cost, 1);
  return cost;
}

// MatMulNBits: A [..., K] x B (N x K weights packed as uint8 [N, ceil(K / block_size), blob]).
struct NBits {
  int64_t k = 0, n = 0, bits = 4, block_size = 0;
};

NBits nbits(const OpContext& c) {
  NBits q;
  q.k = required_int_attr(c, "K", 1);
  q.n = required_int_attr(c, "N", 1);
  q.bits = c.attr_int("bits", 4);
  if (q.bits < 2 || q.bits > 8) c.fail("bits = " + std::to_string(q.bits) + " is not in 2..8");
  q.block_size = required_int_attr(c, "block_size", 16);
  if ((q.block_size & (q.block_size - 1)) != 0)
    c.fail("block_size = " + std::to_string(q.block_size) + " is not a power of two");
  const Shape& a = c.in_shape(0);
  if (a.empty() || a.back() != q.k)
    c.fail("input A " + shape_to_string(a) + " does not end in K = " + std::to_string(q.k));
  const Shape& b = c.in_shape(1);
  const int64_t blocks = q.k / q.block_size + (q.k % q.block_size != 0);
  const int64_t blob = q.block_size * q.bits / 8;
  if (b.size() == 3 && (b[0] != q.n || b[1] != blocks || b[2] != blob))
    c.fail("packed B " + shape_to_string(b) + " is not [N, ceil(K / block_size), block_size * bits / 8] = " +
           shape_to_string({q.n, blocks, blob}));
  if (!b.empty() && b[0] != q.n) c.fail("packed B " + shape_to_string(b) + " does not start with N = " + std::to_string(q.n));
  return q;
}

void infer_matmul_nbits(OpContext& c) {
  const NBits q = nbits(c);
  Shape out = c.in_shape(0);
  out.back() = q.n;
  c.set_output(0, c.in_dtype(0), out);
}

OpCost cost_matmul_nbits(const OpContext& c) {
  const NBits q = nbits(c);
  const double weights = static_cast<double>(q.k) * static_cast<double>(q.n);
  const double rows = element_count(c.in_shape(0)) / static_cast<double>(q.k);
  OpCost cost;
  cost.macs = rows * weights;
  // Dequantize each weight once (subtract zero point, scale), add the bias to each output.
  cost.flops = 2 * cost.macs + kDequantizeFlops * weights + (c.has_input(5) ? output_elements(c) : 0);
  cost.quantized_weights.emplace_back(1, weights);
  return cost;
}

// MatMulBnb4: A [..., K] x 4-bit FP4 / NF4 B (N x K, transB = 1) packed as uint8 [(N*K + 1) / 2],
// absmax per block_size weights. transB = 0 multiplies [..., N] by B = [N, K] instead.
struct Bnb4 {
  int64_t k = 0, n = 0;
  bool trans_b = true;
};

Bnb4 bnb4(const OpContext& c) {
  Bnb4 q{required_int_attr(c, "K", 1), required_int_attr(c, "N", 1), c.attr_int("transB", 1) != 0};
  const int64_t block = required_int_attr(c, "block_size", 16);
  if ((block & (block - 1)) != 0) c.fail("block_size = " + std::to_string(block) + " is not a power of two");
  const int64_t quant_type = required_int_attr(c, "quant_type", 0);
  if (quant_type > 1) c.fail("quant_type = " + std::to_string(quant_type) + " is neither 0 (FP4) nor 1 (NF4)");
  const Shape& a = c.in_shape(0);
  const int64_t inner = q.trans_b ? q.k : q.n;
  if (a.empty() || a.back() != inner) c.fail("input A " + shape_to_string(a) + " does not end in " + std::to_string(inner));
  return q;
}

void infer_matmul_bnb4(OpContext& c) {
  const Bnb4 q = bnb4(c);
  Shape out = c.in_shape(0);
  out.back() = q.trans_b ? q.n : q.k;
  c.set_output(0, c.in_dtype(0), out);
}

OpCost cost_matmul_bnb4(const OpContext& c) {
  const Bnb4 q = bnb4(c);
  const double weights = static_cast<double>(q.k) * static_cast<double>(q.n);
  OpCost cost;
  cost.macs = element_count(c.in_shape(0)) / static_cast<double>(c.in_shape(0).back()) * weights;
  cost.flops = 2 * cost.macs + weights;  // dequantize: a table lookup scaled by absmax, once per weight
  cost.quantized_weights.emplace_back(1, weights);
  return cost;
}

// QAttention: input, weight, bias, input_scale, weight_scale, mask_index, input_zero_point,
// weight_zero_point, past. Self-attention with a merged int8 QKV projection.
struct QAttentionDims {
  int64_t batch, seq, input_hidden, hidden, heads, head_size, past;
};

QAttentionDims qattention_dims(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  if (x.size() != 3) c.fail("input must be [batch, sequence, input_hidden], got " + shape_to_string(x));
  if (w.size() != 2 || w[0] != x[2] || w[1] % 3 != 0)
    c.fail("weight " + shape_to_string(w) + " is not [input_hidden, 3 * hidden] for input " + shape_to_string(x));
  QAttentionDims d{x[0], x[1], x[2], w[1] / 3, required_int_attr(c, "num_heads", 1), 0, 0};
  if (d.hidden % d.heads != 0)
    c.fail("hidden size " + std::to_string(d.hidden) + " is not divisible by num_heads " + std::to_string(d.heads));
  d.head_size = d.hidden / d.heads;
  if (c.has_input(8)) {
    const Shape& past = c.in_shape(8);
    if (past.size() != 5) c.fail("past must be [2, batch, heads, past_sequence, head_size], got " + shape_to_string(past));
    d.past = past[3];
  }
  return d;
}

void infer_qattention(OpContext& c) {
  const auto d = qattention_dims(c);
  c.set_output(0, c.in_dtype(2), {d.batch, d.seq, d.hidden});
  c.set_output(1, c.in_dtype(2), {2, d.batch, d.heads, d.past + d.seq, d.head_size});
}

OpCost cost_qattention(const OpContext& c) {
  const auto d = qattention_dims(c);
  AttentionWork w = attention_work(d.batch, d.heads, d.seq, d.past + d.seq, d.head_size, d.head_size);
  const double projected = w.batch * w.q_len * 3 * static_cast<double>(d.hidden);
  w.projection_macs = projected * static_cast<double>(d.input_hidden);
  w.projection_flops = 2 * projected;  // rescale the int32 accumulators, add the bias
  w.mask = c.has_input(5);
  OpCost cost = attention_cost(w);
  count_weight(c, cost, 1);
  return cost;
}

}  // namespace

// Measurement plans of quantization_plans.cpp.
OpPlan plan_quantize_linear(const OpContext& c);
OpPlan plan_dequantize_linear(const OpContext& c);
OpPlan plan_dynamic_quantize_linear(const OpContext& c);
OpPlan plan_matmul_integer(const OpContext& c);
OpPlan plan_qlinear_matmul(const OpContext& c);
OpPlan plan_qlinear_conv(const OpContext& c);

void register_quantization_ops(OpRegistry& r) {
  constexpr std::string_view ms = "com.microsoft";
  r.add(OpTraits(OpForm::kConv).with_integer_math(), {
      {"", "QLinearConv", infer_qlinear_conv, cost_qlinear_conv, plan_qlinear_conv},
      {"", "ConvInteger", infer_conv_integer, cost_conv_integer, not_measured("no GPU kernel yet (integer conv)")},
      {ms, "QLinearConv", infer_qlinear_conv, cost_qlinear_conv, {}, inputs(8, 9)},
  });
  r.add(OpForm::kGemm, {
      {ms, "MatMulNBits", infer_matmul_nbits, cost_matmul_nbits, {}, inputs(3, 6)},
      {ms, "MatMulBnb4", infer_matmul_bnb4, cost_matmul_bnb4, {}, inputs(3, 3)},
  });
  r.add(OpTraits(OpForm::kGemm).with_integer_math(), {
      {"", "QLinearMatMul", infer_qlinear_matmul, cost_qlinear_matmul, plan_qlinear_matmul},
      {"", "MatMulInteger", infer_matmul_integer, cost_matmul_integer, plan_matmul_integer},
      {ms, "QGemm", infer_qgemm, cost_qgemm, {}, inputs(6, 9)},
      {ms, "DynamicQuantizeMatMul", infer_dynamic_quantize_matmul, cost_dynamic_quantize_matmul, {}, inputs(3, 5)},
      {ms, "MatMulIntegerToFloat", infer_matmul_integer_to_float, cost_matmul_integer_to_float, {}, inputs(4, 7)},
  });
  r.add(OpTraits(OpForm::kAttention).with_integer_math(), {
      {ms, "QAttention", infer_qattention, cost_qattention, {}, inputs(5, 9).outputs(1, 2)},
  });
  r.add(OpForm::kPointwise, {
      {"", "QuantizeLinear", infer_quantize_linear, cost_quantize_linear, plan_quantize_linear},
      {"", "DequantizeLinear", infer_dequantize_linear, cost_dequantize_linear, plan_dequantize_linear},
      {ms, "QuantizeLinear", infer_quantize_linear, cost_quantize_linear, {}, inputs(2, 3)},
      {ms, "DequantizeLinear", infer_dequantize_linear, cost_dequantize_linear, {}, inputs(2, 3)},
      {ms, "QLinearAdd", infer_qlinear_binary, cost_qlinear_elementwise<1, 2>, {}, inputs(7, 8)},
      {ms, "QLinearMul", infer_qlinear_binary, cost_qlinear_elementwise<1, 2>, {}, inputs(7, 8)},
      {ms, "QLinearSigmoid", infer_unary, cost_qlinear_elementwise<static_cast<int>(kSigmoidFlops), 1>, {}, inputs(4, 5)},
      {ms, "QLinearLeakyRelu", infer_unary, cost_qlinear_elementwise<2, 1>, {}, inputs(4, 5)},
  });
  r.add(OpForm::kReduction, {  // a min/max over the tensor, then the scale
      {"", "DynamicQuantizeLinear", infer_dynamic_quantize_linear, cost_dynamic_quantize_linear, plan_dynamic_quantize_linear},
      {ms, "QLinearSoftmax", infer_qlinear_softmax, cost_qlinear_elementwise<static_cast<int>(kSoftmaxFlops), 1>, {}, inputs(5, 5)},
  });
  r.add(OpForm::kPooling, {
      {ms, "QLinearGlobalAveragePool", infer_qlinear_global_average_pool, cost_qlinear_global_average_pool, {}, inputs(5, 5)},
      {ms, "QLinearAveragePool", infer_qlinear_average_pool, cost_qlinear_average_pool, {}, inputs(4, 5)},
  });
  r.add(OpForm::kLayout, {
      {ms, "QLinearConcat", infer_qlinear_concat, cost_qlinear_concat, {}, inputs(3, kNoLimit)},
  });
}

}  // namespace modelcost
