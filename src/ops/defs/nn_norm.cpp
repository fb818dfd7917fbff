// Op rules: nn family, normalisations (BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization, LRN) and
// Dropout. Formulas: docs/ops/nn.md.
#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

constexpr int32_t kFloatType = 1;  // onnx::TensorProto::FLOAT
constexpr int32_t kBoolType = 9;   // onnx::TensorProto::BOOL

// Normalisations that compute their own statistics, over `elements` values in `groups` groups:
// mean (1 add) + variance (subtract, square, add) + normalise (subtract, multiply by 1/std)
// = 6 flops per element, +1 each for a scale multiply and a bias add; per group the mean and
// variance divides, the epsilon add and the rsqrt = 4.
double normalisation_flops(double elements, double groups, bool scale, bool bias) {
  return elements * (6 + (scale ? 1 : 0) + (bias ? 1 : 0)) + 4 * groups;
}

// ---- BatchNormalization ----
bool batch_norm_training(const OpContext& c) {
  if (c.opset() >= 14) return c.attr_int("training_mode", 0) != 0;
  // Before opset 14 the extra outputs (mean, var, saved_mean, saved_var) exist only in training.
  for (size_t i = 1; i < c.num_outputs(); ++i)
    if (c.has_output(i)) return true;
  return false;
}

void infer_batch_norm(OpContext& c) {
  require_rank_at_least(c, 0, 2, "input X (N, C, ...)");
  const Shape& x = c.in_shape(0);
  const int64_t channels = x[1];
  // Opsets before 9 allow spatial=0: per-(C, D1, ...) statistics.
  const bool per_channel = c.attr_int("spatial", 1) != 0;
  const double expected = per_channel ? static_cast<double>(channels) : element_count(dims_from(x, 1));
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i)
    if (c.has_input(i) && element_count(c.in_shape(i)) != expected)
      c.fail(std::string(names[i]) + " " + shape_to_string(c.in_shape(i)) + " must have " +
             std::to_string(static_cast<int64_t>(expected)) + " elements (one per channel)");
  c.set_output(0, c.in_dtype(0), x);
  const Shape stats = per_channel ? Shape{channels} : dims_from(x, 1);
  // Opset 14+ running statistics take the dtype of input_mean; earlier outputs that of X.
  const int32_t stats_dtype = c.opset() >= 14 && c.has_input(3) ? c.in_dtype(3) : c.in_dtype(0);
  for (size_t i = 1; i < c.num_outputs(); ++i) c.set_output(i, stats_dtype, stats);
}

// Inference: y = x*a + b with a, b folded per channel (a = scale*rsqrt(var+eps): 3, b = B - mean*a: 2).
// Training adds the batch statistics (4 per element, 2 divides per channel) and the momentum
// updates of the running mean and variance (3 each per channel).
OpCost cost_batch_norm(const OpContext& c) {
  const double n = element_count(c.in_shape(0));
  const double channels = element_count(c.in_shape(1));
  OpCost cost;
  cost.flops = batch_norm_training(c) ? 6 * n + 13 * channels : 2 * n + 5 * channels;
  return cost;
}

// ---- InstanceNormalization: statistics per (n, c) ----
void infer_instance_norm(OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const int64_t channels = c.in_shape(0)[1];
  for (size_t i = 1; i <= 2; ++i)
    if (element_count(c.in_shape(i)) != static_cast<double>(channels))
      c.fail(std::string(i == 1 ? "scale " : "B ") + shape_to_string(c.in_shape(i)) + " must have " +
             std::to_string(channels) + " elements");
  infer_unary(c);
}

OpCost cost_instance_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  OpCost cost;
  cost.flops = normalisation_flops(element_count(x), static_cast<double>(x[0]) * static_cast<double>(x[1]), true, true);
  return cost;
}

// ---- LayerNormalization (opset 17): normalises dims [axis, rank) ----
void infer_layer_norm(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.empty()) c.fail("input X must have rank >= 1");
  const size_t axis = static_cast<size_t>(c.axis(c.attr_int("axis", -1), x.size()));
  c.set_output(0, c.in_dtype(0), x);
  Shape stats = x;
  for (size_t i = axis; i < stats.size(); ++i) stats[i] = 1;
  const int32_t stash = static_cast<int32_t>(c.attr_int("stash_type", kFloatType));
  c.set_output(1, stash, stats);  // Mean
  c.set_output(2, stash, stats);  // InvStdDev
}

OpCost cost_layer_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const size_t axis = static_cast<size_t>(c.axis(c.attr_int("axis", -1), x.size()));
  const double rows = element_count(Shape(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis)));
  OpCost cost;
  cost.flops = normalisation_flops(element_count(x), rows, c.has_input(1), c.has_input(2));
  return cost;
}

// ---- GroupNormalization (opsets 18, 21): statistics per (n, group) ----
void infer_group_norm(OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const int64_t channels = c.in_shape(0)[1];
  if (!c.has_attr("num_groups")) c.fail("num_groups attribute is required");
  const int64_t groups = c.attr_int("num_groups", 0);
  if (groups <= 0 || channels % groups != 0)
    c.fail("num_groups " + std::to_string(groups) + " must be positive and divide the " + std::to_string(channels) +
           " channels");
  // Opset 18 specified [num_groups] scale and bias, opset 21 [C]; exporters write either.
  for (size_t i = 1; i <= 2; ++i) {
    const double n = element_count(c.in_shape(i));
    if (n != static_cast<double>(channels) && n != static_cast<double>(groups))
      c.fail(std::string(i == 1 ? "scale " : "bias ") + shape_to_string(c.in_shape(i)) + " must have " +
             std::to_string(channels) + " (channels) or " + std::to_string(groups) + " (groups) elements");
  }
  infer_unary(c);
}

OpCost cost_group_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  OpCost cost;
  cost.flops = normalisation_flops(element_count(x), static_cast<double>(x[0]) * static_cast<double>(c.attr_int("num_groups", 1)), true, true);
  return cost;
}

// ---- MeanVarianceNormalization: statistics over `axes` (default [0, 2, 3]) ----
double mvn_group_size(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (!c.has_attr("axes")) axes = {0, 2, 3};
  double size = 1;
  for (int64_t a : axes) size *= static_cast<double>(x[static_cast<size_t>(c.axis(a, x.size()))]);
  return size;
}

void infer_mvn(OpContext& c) {
  mvn_group_size(c);  // checks the axes
  infer_unary(c);
}

OpCost cost_mvn(const OpContext& c) {
  const double n = element_count(c.in_shape(0));
  const double group = mvn_group_size(c);
  const double groups = group > 0 ? n / group : 0;
  OpCost cost;
  // Opset 1's normalize_variance=0 only subtracts the mean: 2 per element, a divide per group.
  cost.flops = c.attr_int("normalize_variance", 1) ? normalisation_flops(n, groups, false, false) : 2 * n + groups;
  return cost;
}

// ---- LpNormalization: x / ||x||_p along axis ----
void infer_lp_norm(OpContext& c) {
  const int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2, got " + std::to_string(p));
  c.axis(c.attr_int("axis", -1), c.in_rank(0));
  infer_unary(c);
}

// |x| or x^2, an add and a divide per element; a square root per row for p = 2.
OpCost cost_lp_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const double n = element_count(x);
  const double len = x.empty() ? 1 : static_cast<double>(x[static_cast<size_t>(c.axis(c.attr_int("axis", -1), x.size()))]);
  OpCost cost;
  cost.flops = 3 * n + (c.attr_int("p", 2) == 2 && len > 0 ? n / len : 0);
  return cost;
}

// ---- LRN: across-channel local response normalisation ----
void infer_lrn(OpContext& c) {
  if (!c.has_attr("size")) c.fail("size attribute is required");
  if (c.attr_int("size", 0) <= 0) c.fail("size must be positive, got " + std::to_string(c.attr_int("size", 0)));
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  infer_unary(c);
}

// Per element: a square, `size` adds over the channel window, bias + alpha/size scaling (2),
// the power and the divide.
OpCost cost_lrn(const OpContext& c) {
  OpCost cost;
  cost.flops = element_count(c.in_shape(0)) * static_cast<double>(c.attr_int("size", 1) + 5);
  return cost;
}

// ---- measurement ----

OpPlan plan_layer_norm(const OpContext& c) {
  if (!float_data(c)) return unsupported("LayerNormalization on non-float tensors");
  const Shape& in = c.in_shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", -1), in.size());
  LayerNormPlan p;
  static_cast<RowView&>(p) = row_view(in, axis, static_cast<int64_t>(in.size()) - 1);
  p.epsilon = c.attr_float("epsilon", 1e-5f);
  p.has_scale = c.has_input(1);
  p.has_bias = c.has_input(2);
  if ((p.has_scale && element_count(c.in_shape(1)) != p.axis_len) ||
      (p.has_bias && element_count(c.in_shape(2)) != p.axis_len))
    return unsupported("LayerNormalization with broadcast scale or bias");
  return p;
}

// Inference BatchNormalization over [N, C, spatial...] (training mode writes running statistics).
OpPlan plan_batch_norm(const OpContext& c) {
  if (!float_data(c)) return unsupported("BatchNormalization on non-float tensors");
  if (c.num_inputs() < 5) return unsupported("BatchNormalization without scale, bias, mean and variance");
  for (size_t o = 1; o < c.num_outputs(); ++o)
    if (c.has_output(o)) return unsupported("BatchNormalization in training mode");
  if (c.attr_int("training_mode", 0) != 0) return unsupported("BatchNormalization in training mode");
  const Shape& in = c.in_shape(0);
  if (in.size() < 2) return unsupported("BatchNormalization of rank below 2");
  for (size_t i = 1; i < 5; ++i)
    if (!c.has_input(i) || element_count(c.in_shape(i)) != in[1])
      return unsupported("BatchNormalization parameters not of C elements");
  BatchNormPlan p;
  static_cast<RowView&>(p) = row_view(in, 1, 1);
  p.epsilon = c.attr_float("epsilon", 1e-5f);
  return p;
}

// InstanceNormalization is GroupNormalization with a group per channel.
OpPlan plan_group_norm_over(const OpContext& c, int64_t groups, const char* op) {
  if (!float_data(c)) return unsupported(std::string(op) + " on non-float tensors");
  const Shape& in = c.in_shape(0);
  GroupNormPlan p;
  p.batch = in[0];
  p.channels = in[1];
  p.groups = groups;
  p.spatial = static_cast<int64_t>(element_count(Shape(in.begin() + 2, in.end())));
  p.epsilon = c.attr_float("epsilon", 1e-5f);
  p.per_group_affine = groups != p.channels && element_count(c.in_shape(1)) == static_cast<double>(groups);
  return p;
}

OpPlan plan_instance_norm(const OpContext& c) {
  return plan_group_norm_over(c, c.in_shape(0)[1], "InstanceNormalization");
}

OpPlan plan_group_norm(const OpContext& c) {
  return plan_group_norm_over(c, c.attr_int("num_groups", 1), "GroupNormalization");
}

// ---- Dropout ----
bool dropout_training(const OpContext& c) {
  if (c.opset() >= 12) {
    const TensorValue* mode = c.value(2);
    return mode && mode->size() == 1 && mode->as_int(0) != 0;
  }
  return c.opset() < 7 && c.attr_int("is_test", 0) == 0;
}

void infer_dropout(OpContext& c) {
  const TensorValue* ratio_input = c.value(1);
  const double ratio = c.opset() >= 12 ? (ratio_input && ratio_input->size() == 1 ? ratio_input->as_double(0) : 0.5)
                                       : c.attr_float("ratio", 0.5f);
  if (ratio < 0 || ratio >= 1) c.fail("ratio must be in [0, 1), got " + std::to_string(ratio));
  c.set_output(0, c.in_dtype(0), c.in_shape(0));
  c.set_output(1, c.opset() >= 10 ? kBoolType : c.in_dtype(0), c.in_shape(0));  // mask
  c.set_value(0, c.shared_value(0));
}

// Inference: an identity (no data moves unless the mask is asked for). Training: a random
// draw compared with the ratio and a scaling multiply per element.
OpCost cost_dropout(const OpContext& c) {
  OpCost cost;
  if (dropout_training(c)) cost.flops = 2 * element_count(c.in_shape(0));
  else cost.moves_no_data = !c.has_output(1);
  return cost;
}


}  // namespace

void register_nn_norm_ops(OpRegistry& r) {
  // Inference BatchNormalization is a per-channel scale and shift a conv call folds in (after an
  // activation or a MatMul, two steps of the pointwise chain).
  r.add(OpTraits(OpForm::kPointwise).with_conv_epilogue().with_stored_statistics(), {
      {"", "BatchNormalization", infer_batch_norm, cost_batch_norm, plan_batch_norm},
  });
  // Inference Dropout is the identity, which every runtime elides (ONNX Runtime's EliminateDropout):
  // a view as Identity is. The cost rule still prices a training-mode node's draw and scale.
  r.add(OpTraits(OpForm::kLayout).with_view(), {
      {"", "Dropout", infer_dropout, cost_dropout, plan_reinterpret},
  });
  r.add(OpForm::kNorm, {
      {"", "InstanceNormalization", infer_instance_norm, cost_instance_norm, plan_instance_norm},
      {"", "LayerNormalization", infer_layer_norm, cost_layer_norm, plan_layer_norm},
      {"", "GroupNormalization", infer_group_norm, cost_group_norm, plan_group_norm, inputs(3, 3)},
      {"", "MeanVarianceNormalization", infer_mvn, cost_mvn, not_measured("no GPU kernel yet")},
      {"", "LpNormalization", infer_lp_norm, cost_lp_norm, not_measured("no GPU kernel yet")},
      {"", "LRN", infer_lrn, cost_lrn, not_measured("no GPU kernel yet")},
  });
}

}  // namespace modelcost
