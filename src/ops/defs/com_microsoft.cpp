// Op rules: com.microsoft fusions that ONNX Runtime's optimizers and LLM exporters emit — fused
// Conv / MatMul / Gemm, the Gelu family, the bias and skip fusions, the layer normalizations —
// plus Inverse, Trilu, the relative position biases and Rfft / Irfft. Attention ops live in
// attention.cpp, quantized ops in quantization.cpp. Formulas: docs/ops/com_microsoft.md.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "ops/defs/fused_helpers.h"
#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

double present(const OpContext& c, size_t i) { return c.has_input(i) ? 1 : 0; }

// ---- fused Conv / MatMul / Gemm ----

// FusedConv / NhwcFusedConv: X, W, B, Z (a residual added before the activation).
template <bool ChannelsLast>
void infer_conv(OpContext& c) {
  activation_flops(c, c.attr_string("activation", ""));  // validates the name
  c.set_output(0, c.in_dtype(0), conv_geometry(c, c.in_shape(0), c.in_shape(1), ChannelsLast).output);
}

template <bool ChannelsLast>
OpCost cost_conv(const OpContext& c) {
  OpCost cost;
  cost.macs = conv_geometry(c, c.in_shape(0), c.in_shape(1), ChannelsLast).macs;
  const double per_output = present(c, 2) + present(c, 3) + activation_flops(c, c.attr_string("activation", ""));
  cost.flops = 2 * cost.macs + per_output * output_elements(c);
  if (!ChannelsLast) cost.bytes_read = conv_bytes_read(c);  // as Conv's: the same kernel
  return cost;
}

// FusedMatMul / TransposeMatMul / FusedMatMulActivation: numpy matmul after the optional
// transposes. transBatch moves dim 0 behind the other batch dims (…, d0, last).
Shape fused_matmul_operand(const OpContext& c, Shape s, const char* trans, const char* trans_batch) {
  if (c.attr_int(trans_batch, 0) != 0 && s.size() >= 3) {
    const int64_t first = s.front();
    s.erase(s.begin());
    s.insert(s.end() - 1, first);
  }
  if (c.attr_int(trans, 0) != 0 && s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

Shape fused_matmul_a(const OpContext& c) { return fused_matmul_operand(c, c.in_shape(0), "transA", "transBatchA"); }

void infer_fused_matmul(OpContext& c) {
  activation_flops(c, c.attr_string("activation", ""));
  c.set_output(0, c.in_dtype(0),
               matmul_shape(c, fused_matmul_a(c), fused_matmul_operand(c, c.in_shape(1), "transB", "transBatchB")));
}

OpCost cost_fused_matmul(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(fused_matmul_a(c), c.out(0).shape);
  const double per_output = (c.attr_float("alpha", 1.0f) != 1.0f ? 1 : 0) + activation_flops(c, c.attr_string("activation", ""));
  cost.flops = 2 * cost.macs + per_output * output_elements(c);
  return cost;
}

// FusedGemm: alpha * A' B' + beta * C, then the activation.
GemmGeometry fused_gemm_geometry(const OpContext& c) { return gemm_geometry_of_inputs(c, 0, 1); }

void infer_fused_gemm(OpContext& c) {
  const auto g = fused_gemm_geometry(c);
  activation_flops(c, c.attr_string("activation", ""));
  if (c.has_input(2)) broadcast_shapes({g.m, g.n}, c.in_shape(2), c);  // C must broadcast to [M, N]
  c.set_output(0, c.in_dtype(0), {g.m, g.n});
}

OpCost cost_fused_gemm(const OpContext& c) {
  const auto g = fused_gemm_geometry(c);
  const double outputs = static_cast<double>(g.m) * static_cast<double>(g.n);
  const bool bias = c.has_input(2);
  double per_output = activation_flops(c, c.attr_string("activation", ""));
  per_output += c.attr_float("alpha", 1.0f) != 1.0f ? 1 : 0;
  if (bias) per_output += 1 + (c.attr_float("beta", 1.0f) != 1.0f ? 1 : 0);
  OpCost cost;
  cost.macs = outputs * static_cast<double>(g.k);
  cost.flops = 2 * cost.macs + per_output * outputs;
  return cost;
}

// ---- activations and bias fusions: K flops per output element ----

constexpr double kGeluFlops = 5;      // x/sqrt2, erf, +1, *x, *0.5
constexpr double kFastGeluFlops = 9;  // x^3 (2), two scalings, add, tanh, +1, *x, *0.5
constexpr double kQuickGeluFlops = 2 + kSigmoidFlops;  // alpha*x, sigmoid, *x
constexpr double kSiluFlops = 1 + kSigmoidFlops;       // x * sigmoid(x)

// GemmFastGelu: FastGelu(X x W + bias).
void infer_gemm_fast_gelu(OpContext& c) { c.set_output(0, c.in_dtype(0), matmul_shape(c, c.in_shape(0), c.in_shape(1))); }

OpCost cost_gemm_fast_gelu(const OpContext& c) {
  OpCost cost;
  cost.macs = matmul_macs(c.in_shape(0), c.out(0).shape);
  cost.flops = 2 * cost.macs + (present(c, 2) + kFastGeluFlops) * output_elements(c);
  return cost;
}

// BiasSplitGelu: X [N, S, D] + bias [D], split in halves, left * Gelu(right) -> [N, S, D / 2].
void infer_bias_split_gelu(OpContext& c) {
  Shape out = c.in_shape(0);
  if (out.size() != 3 || out[2] % 2 != 0) c.fail("input must be [N, S, D] with an even D, got " + shape_to_string(out));
  out[2] /= 2;
  c.set_output(0, c.in_dtype(0), out);
}

OpCost cost_bias_split_gelu(const OpContext& c) {
  OpCost cost;  // bias add on every input; Gelu and the product per output
  cost.flops = element_count(c.in_shape(0)) + (kGeluFlops + 1) * output_elements(c);
  return cost;
}

OpCost cost_fast_gelu(const OpContext& c) {
  OpCost cost;
  cost.flops = (kFastGeluFlops + present(c, 1)) * output_elements(c);
  return cost;
}

template <int Numerator, int Denominator>
OpCost cost_per_element(const OpContext& c) {
  OpCost cost;
  cost.flops = static_cast<double>(Numerator) / Denominator * output_elements(c);
  return cost;
}

// BiasAdd: X [N, S, C] + bias [C] + skip [N, S, C].
void infer_bias_add(OpContext& c) {
  broadcast_shapes(c.in_shape(0), c.in_shape(1), c);
  broadcast_shapes(c.in_shape(0), c.in_shape(2), c);
  infer_unary(c);
}

void infer_bias_softmax(OpContext& c) {
  const Shape out = broadcast_shapes(c.in_shape(0), c.in_shape(1), c);
  c.axis(c.attr_int("axis", 1), out.size());
  c.set_output(0, c.in_dtype(0), out);
}

OpCost cost_bias_softmax(const OpContext& c) {
  OpCost cost;
  cost.flops = (1 + kSoftmaxFlops) * output_elements(c);
  return cost;
}

// BiasDropout: data, bias, residual, ratio, training_mode -> output, mask.
void infer_bias_dropout(OpContext& c) {
  broadcast_shapes(c.in_shape(0), c.in_shape(1), c);
  c.set_output(0, c.in_dtype(0), c.in_shape(0));
  c.set_output(1, kBool, c.in_shape(0));
}

OpCost cost_bias_dropout(const OpContext& c) {
  OpCost cost;  // bias add, residual add, dropout scaling when training_mode is given
  cost.flops = (1 + present(c, 2) + present(c, 4)) * output_elements(c);
  return cost;
}

// ---- layer normalizations ----

// Mean / inverse-std outputs: the input's dims with the normalized ones (axis..rank) set to 1.
Shape statistics_shape(const Shape& x, int64_t axis) {
  Shape s = x;
  for (size_t i = static_cast<size_t>(axis); i < s.size(); ++i) s[i] = 1;
  return s;
}

// gamma (and beta / bias) must cover the normalized dims: checked against the last dim.
void check_last_dim(const OpContext& c, size_t input, int64_t hidden, const char* what) {
  if (!c.has_input(input)) return;
  const Shape& s = c.in_shape(input);
  if (s.empty() || s.back() != hidden)
    c.fail(std::string(what) + " " + shape_to_string(s) + " does not match hidden size " + std::to_string(hidden));
}

// LayerNormalization / SimplifiedLayerNormalization: X, scale[, B] -> Y, then statistics
// (LayerNormalization: Mean, InvStdDev; Simplified: InvStdVar).
void infer_layer_norm(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.empty()) c.fail("cannot normalize a scalar");
  const int64_t axis = c.axis(c.attr_int("axis", -1), x.size());
  check_last_dim(c, 1, x.back(), "scale");
  c.set_output(0, c.in_dtype(0), x);
  const int32_t stash = static_cast<int32_t>(c.attr_int("stash_type", kFloat));
  for (size_t i = 1; i < c.num_outputs(); ++i) c.set_output(i, stash, statistics_shape(x, axis));
}

// Rows normalised: the dims before axis.
double norm_rows(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  return dims_product(x, 0, static_cast<size_t>(c.axis(c.attr_int("axis", -1), x.size())));
}

OpCost cost_layer_norm(const OpContext& c) {
  OpCost cost;
  cost.flops = layer_norm_flops(element_count(c.in_shape(0)), norm_rows(c), c.has_input(1), c.has_input(2));
  return cost;
}

OpCost cost_rms_norm(const OpContext& c) {
  OpCost cost;
  cost.flops = rms_norm_flops(element_count(c.in_shape(0)), norm_rows(c), c.has_input(1));
  return cost;
}

// SkipLayerNormalization: input, skip, gamma, beta, bias -> output, mean, inv_std_var,
// input_skip_bias_sum. Skip(Simplified): input, skip, gamma, bias -> the same outputs.
template <bool Simplified>
void infer_skip_layer_norm(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 2) c.fail("input must be [batch, sequence, hidden] or [tokens, hidden], got " + shape_to_string(x));
  if (broadcast_shapes(x, c.in_shape(1), c) != x)
    c.fail("skip " + shape_to_string(c.in_shape(1)) + " does not broadcast to input " + shape_to_string(x));
  check_last_dim(c, 2, x.back(), "gamma");
  check_last_dim(c, Simplified ? 3 : 4, x.back(), "bias");
  c.set_output(0, c.in_dtype(0), x);
  c.set_output(1, kFloat, statistics_shape(x, static_cast<int64_t>(x.size()) - 1));
  c.set_output(2, kFloat, statistics_shape(x, static_cast<int64_t>(x.size()) - 1));
  c.set_output(3, c.in_dtype(0), x);
}

template <bool Simplified>
OpCost cost_skip_layer_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const double elements = element_count(x), rows = elements / static_cast<double>(x.back());
  const double adds = (1 + present(c, Simplified ? 3 : 4)) * elements;  // + skip (+ bias)
  OpCost cost;
  cost.flops = adds + (Simplified ? rms_norm_flops(elements, rows, true)
                                  : layer_norm_flops(elements, rows, true, c.has_input(3)));
  return cost;
}

// EmbedLayerNormalization: input_ids, segment_ids, word_embedding, position_embedding,
// segment_embedding, gamma, beta, mask, position_ids -> output, mask_index, embedding_sum.
void infer_embed_layer_norm(OpContext& c) {
  const Shape& ids = c.in_shape(0);
  if (ids.size() != 2) c.fail("input_ids must be [batch, sequence], got " + shape_to_string(ids));
  const Shape& words = c.in_shape(2);
  if (words.size() != 2) c.fail("word_embedding must be [vocabulary, hidden], got " + shape_to_string(words));
  check_last_dim(c, 3, words[1], "position_embedding");
  check_last_dim(c, 4, words[1], "segment_embedding");
  check_last_dim(c, 5, words[1], "gamma");
  const int32_t dtype = c.in_dtype(2);
  c.set_output(0, dtype, {ids[0], ids[1], words[1]});
  c.set_output(1, kInt32, {ids[0]});
  c.set_output(2, dtype, {ids[0], ids[1], words[1]});
}

OpCost cost_embed_layer_norm(const OpContext& c) {
  const Shape& out = c.out(0).shape;
  const double elements = element_count(out);
  OpCost cost;  // word + position (+ segment) embeddings, then the layer norm of each token
  cost.flops = (1 + present(c, 4)) * elements + layer_norm_flops(elements, elements / static_cast<double>(out.back()), true, true);
  return cost;
}

// QEmbedLayerNormalization: EmbedLayerNormalization with uint8 tables, gamma and beta (inputs
// 2-6) and their scales and zero points (8-17); its outputs are float, like the scales.
void infer_qembed_layer_norm(OpContext& c) {
  infer_embed_layer_norm(c);
  const int32_t dtype = c.has_input(8) ? c.in_dtype(8) : onnx::TensorProto::FLOAT;
  for (size_t i : {0, 2})
    if (c.has_output(i)) c.out(i).dtype = dtype;
}

OpCost cost_qembed_layer_norm(const OpContext& c) {
  OpCost cost = cost_embed_layer_norm(c);
  // Each gathered embedding element and each gamma/beta element is dequantized first.
  const double tables = 2 + present(c, 4);
  cost.flops += kDequantizeFlops * (tables * output_elements(c) + 2 * static_cast<double>(c.out(0).shape.back()));
  for (size_t i = 2; i <= 6; ++i)
    if (c.has_input(i)) cost.quantized_weights.emplace_back(i, element_count(c.in_shape(i)));
  return cost;
}

// GroupNorm: X, gamma, beta (NHWC unless channels_last = 0); SkipGroupNorm adds skip (input 3)
// and bias (input 4) first and may output their sum. activation 1 = SiLU.
int64_t group_norm_groups(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 3) c.fail("input rank " + std::to_string(x.size()) + " is below 3");
  const int64_t channels = c.attr_int("channels_last", 1) != 0 ? x.back() : x[1];
  const int64_t groups = required_int_attr(c, "groups", 1);
  if (channels % groups != 0)
    c.fail("groups = " + std::to_string(groups) + " does not divide the " + std::to_string(channels) + " channels");
  if (!c.has_attr("activation")) c.fail("attribute activation is required");
  return groups;
}

void infer_group_norm(OpContext& c) {
  group_norm_groups(c);
  c.set_output(0, c.in_dtype(0), c.in_shape(0));
  c.set_output(1, c.in_dtype(0), c.in_shape(0));
}

OpCost cost_group_norm(const OpContext& c) {
  const double elements = element_count(c.in_shape(0));
  const double rows = static_cast<double>(c.in_shape(0)[0] * group_norm_groups(c));
  const double skip = c.node().op_type == "SkipGroupNorm" ? 1 + present(c, 4) : 0;
  OpCost cost;
  cost.flops = layer_norm_flops(elements, rows, true, true) +
               elements * (skip + (c.attr_int("activation", 0) == 1 ? kSiluFlops : 0));
  return cost;
}

// ---- other math ----

void infer_inverse(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    c.fail("input " + shape_to_string(x) + " is not a batch of square matrices");
  infer_unary(c);
}

OpCost cost_inverse(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const double n = static_cast<double>(x.back());
  OpCost cost;  // LU factorisation and substitution: 2 n^3 per matrix
  cost.flops = 2 * n * n * n * dims_product(x, 0, x.size() - 2);
  return cost;
}

void infer_trilu(OpContext& c) {
  if (c.in_rank(0) < 2) c.fail("input must have rank 2 or more, got " + shape_to_string(c.in_shape(0)));
  infer_unary(c);
}

// GatedRelativePositionBias: query_layer [batch, seq, heads*head] or [tokens, heads*head],
// query_bias, rel_pos [1, heads, seq, seq], weight [head, D], bias [D], eco_a, token_offset.
struct GatedBias {
  int64_t batch, seq, heads, head_size, d;
  double tokens;
};

GatedBias gated_bias(const OpContext& c) {
  GatedBias g{};
  g.heads = required_int_attr(c, "num_heads", 1);
  const Shape& q = c.in_shape(0);
  if (q.size() == 3) {
    g.batch = q[0], g.seq = q[1];
  } else if (q.size() == 2 && c.has_input(6) && c.in_rank(6) == 2) {
    g.batch = c.in_shape(6)[0], g.seq = c.in_shape(6)[1];
  } else {
    c.fail("query_layer must be [batch, seq, hidden], or [tokens, hidden] with token_offset, got " + shape_to_string(q));
  }
  g.tokens = element_count(q) / static_cast<double>(q.back());
  if (q.back() % g.heads != 0) c.fail("hidden size is not divisible by num_heads");
  g.head_size = q.back() / g.heads;
  const Shape& w = c.in_shape(3);
  if (w.size() != 2 || w[0] != g.head_size || w[1] % 2 != 0)
    c.fail("weight " + shape_to_string(w) + " is not [head_size, D] with an even D");
  g.d = w[1];
  return g;
}

void infer_gated_relative_position_bias(OpContext& c) {
  const auto g = gated_bias(c);
  c.set_output(0, c.in_dtype(0), {g.batch, g.heads, g.seq, g.seq});
}

OpCost cost_gated_relative_position_bias(const OpContext& c) {
  const auto g = gated_bias(c);
  const double rows = g.tokens * static_cast<double>(g.heads);  // one gate per token and head
  const double d = static_cast<double>(g.d);
  OpCost cost;
  cost.macs = rows * static_cast<double>(g.head_size) * d;
  // query bias; linear bias; the pairwise sum over D; two sigmoids; the gate arithmetic (4);
  // the product with rel_pos per output element.
  cost.flops = 2 * cost.macs + rows * static_cast<double>(g.head_size) + rows * d + rows * d +
               rows * 2 * kSigmoidFlops + rows * 4 + output_elements(c);
  return cost;
}

// RelativePositionBias: bias_table [buckets, heads], query_length, key_length (int64 scalars).
void infer_relative_position_bias(OpContext& c) {
  const Shape& table = c.in_shape(0);
  if (table.size() != 2) c.fail("bias_table must be [num_buckets, num_heads], got " + shape_to_string(table));
  required_int_attr(c, "max_distance", 1);
  const int64_t q = c.require_ints(1, "query_length").at(0);
  const int64_t k = c.require_ints(2, "key_length").at(0);
  c.set_output(0, c.in_dtype(0), {1, table[1], q, k});
}

OpCost cost_relative_position_bias(const OpContext& c) {
  const Shape& out = c.out(0).shape;
  OpCost cost;  // bucket of each (query, key) pair: divide, log, divide, scale, add; heads gather
  cost.flops = 5 * static_cast<double>(out[2]) * static_cast<double>(out[3]);
  return cost;
}

// ---- Rfft / Irfft over the last signal_ndim dims; (real, imaginary) pairs in a trailing dim of 2 ----

int64_t signal_ndim(const OpContext& c, size_t rank) {
  const int64_t n = c.attr_int("signal_ndim", 1);
  if (n < 1 || static_cast<size_t>(n) > rank) c.fail("signal_ndim = " + std::to_string(n) + " does not fit rank " + std::to_string(rank));
  return n;
}

void infer_rfft(OpContext& c) {
  Shape out = c.in_shape(0);
  signal_ndim(c, out.size());
  out.back() = out.back() / 2 + 1;
  out.push_back(2);
  c.set_output(0, c.in_dtype(0), out);
}

void infer_irfft(OpContext& c) {
  Shape out = c.in_shape(0);
  if (out.size() < 2 || out.back() != 2) c.fail("input must end in a (real, imaginary) dim of 2, got " + shape_to_string(out));
  out.pop_back();
  signal_ndim(c, out.size());
  out.back() = 2 * (out.back() - 1);
  c.set_output(0, c.in_dtype(0), out);
}

// 2.5 n log2 n per real signal of n points (half a complex FFT's 5 n log2 n).
OpCost cost_fft(const OpContext& c, const Shape& real_shape) {
  const size_t rank = real_shape.size();
  const int64_t dims = signal_ndim(c, rank);
  const double n = dims_product(real_shape, rank - dims, rank);
  OpCost cost;
  cost.flops = n > 1 ? 2.5 * n * std::log2(n) * dims_product(real_shape, 0, rank - dims) : 0;
  return cost;
}

OpCost cost_rfft(const OpContext& c) { return cost_fft(c, c.in_shape(0)); }
OpCost cost_irfft(const OpContext& c) { return cost_fft(c, c.out(0).shape); }

}  // namespace

void register_com_microsoft_ops(OpRegistry& r) {
  constexpr std::string_view ms = "com.microsoft";
  r.add(OpForm::kConv, {
      {ms, "FusedConv", infer_conv<false>, cost_conv<false>, {}, inputs(2, 4)},
      {ms, "NhwcConv", infer_conv<true>, cost_conv<true>, {}, inputs(2, 3)},
      {"com.microsoft.nchwc", "Conv", infer_conv<false>, cost_conv<false>, {}, inputs(2, 4)},  // X, W, B, Sum; NCHWc layout
      {ms, "NhwcFusedConv", infer_conv<true>, cost_conv<true>, {}, inputs(2, 4)},
  });
  r.add(OpForm::kGemm, {
      {ms, "FusedMatMul", infer_fused_matmul, cost_fused_matmul, {}, inputs(2, 2)},
      {ms, "TransposeMatMul", infer_fused_matmul, cost_fused_matmul, {}, inputs(2, 2)},
      {ms, "FusedMatMulActivation", infer_fused_matmul, cost_fused_matmul, {}, inputs(2, 2)},
      {ms, "FusedGemm", infer_fused_gemm, cost_fused_gemm, {}, inputs(2, 3)},
      {ms, "GemmFastGelu", infer_gemm_fast_gelu, cost_gemm_fast_gelu, {}, inputs(2, 3)},
  });
  r.add(OpForm::kPointwise, {
      {ms, "Gelu", infer_unary, cost_per_element<static_cast<int>(kGeluFlops), 1>, {}, inputs(1, 1)},
      {ms, "BiasGelu", infer_broadcast, cost_per_element<1 + static_cast<int>(kGeluFlops), 1>, {}, inputs(2, 2)},
      {ms, "FastGelu", infer_broadcast, cost_fast_gelu, {}, inputs(1, 2)},
      {ms, "QuickGelu", infer_unary, cost_per_element<static_cast<int>(kQuickGeluFlops), 1>, {}, inputs(1, 1)},
      {ms, "BiasSplitGelu", infer_bias_split_gelu, cost_bias_split_gelu, {}, inputs(2, 2)},
      {ms, "BiasAdd", infer_bias_add, cost_per_element<2, 1>, {}, inputs(3, 3)},
      {ms, "BiasDropout", infer_bias_dropout, cost_bias_dropout, {}, inputs(2, 5).outputs(1, 2)},
      {ms, "Trilu", infer_trilu, cost_data_movement, {}, inputs(1, 2)},
  });
  r.add(OpForm::kReduction, {
      {ms, "BiasSoftmax", infer_bias_softmax, cost_bias_softmax, {}, inputs(2, 2)},
  });
  r.add(OpForm::kNorm, {
      {ms, "GroupNorm", infer_group_norm, cost_group_norm, {}, inputs(3, 3)},
      {ms, "SkipGroupNorm", infer_group_norm, cost_group_norm, {}, inputs(4, 5).outputs(1, 2)},
      {ms, "LayerNormalization", infer_layer_norm, cost_layer_norm, {}, inputs(2, 3).outputs(1, 3)},
      {ms, "SimplifiedLayerNormalization", infer_layer_norm, cost_rms_norm, {}, inputs(2, 2).outputs(1, 2)},
      {"", "SimplifiedLayerNormalization", infer_layer_norm, cost_rms_norm, not_measured("no GPU kernel yet"), inputs(2, 2).outputs(1, 2)},  // ORT registers it in ai.onnx too
      {ms, "SkipLayerNormalization", infer_skip_layer_norm<false>, cost_skip_layer_norm<false>, {}, inputs(3, 5).outputs(1, 4)},
      {ms, "SkipSimplifiedLayerNormalization", infer_skip_layer_norm<true>, cost_skip_layer_norm<true>, {}, inputs(3, 4).outputs(1, 4)},
  });
  r.add(OpForm::kOther, {
      {ms, "EmbedLayerNormalization", infer_embed_layer_norm, cost_embed_layer_norm, {}, inputs(7, 9).outputs(1, 3)},
      {ms, "QEmbedLayerNormalization", infer_qembed_layer_norm, cost_qembed_layer_norm, {}, inputs(18, 18).outputs(2, 2)},
      {ms, "Inverse", infer_inverse, cost_inverse, {}, inputs(1, 1)},
      {ms, "GatedRelativePositionBias", infer_gated_relative_position_bias, cost_gated_relative_position_bias, {}, inputs(6, 7)},
      {ms, "RelativePositionBias", infer_relative_position_bias, cost_relative_position_bias, {}, inputs(3, 3)},
      {ms, "Rfft", infer_rfft, cost_rfft, {}, inputs(1, 1)},
      {ms, "Irfft", infer_irfft, cost_irfft, {}, inputs(1, 1)},
  });
}

}  // namespace modelcost
