// Op rules: nn family, pools (AveragePool, MaxPool, LpPool, their Global forms, MaxUnpool).
// Formulas: docs/ops/nn.md.
#include <onnx/onnx_pb.h>

#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

constexpr int32_t kInt64Type = 7;  // onnx::TensorProto::INT64

// Output [N, C, out...] of a windowed pool; kernel_shape is required.
Window infer_pool_shape(OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const Shape& x = c.in_shape(0);
  const Window w = read_window(c, x.size() - 2, {});
  Shape out = {x[0], x[1]};
  for (int64_t d : window_output(c, w, dims_from(x, 2))) out.push_back(d);
  c.set_output(0, c.in_dtype(0), out);
  return w;
}

void infer_pool(OpContext& c) { infer_pool_shape(c); }

void infer_max_pool(OpContext& c) {
  const int64_t storage_order = c.attr_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1)
    c.fail("storage_order must be 0 (row major) or 1 (column major), got " + std::to_string(storage_order));
  infer_pool_shape(c);
  c.set_output(1, kInt64Type, c.out(0).shape);  // Indices
}

void infer_lp_pool(OpContext& c) {
  // LpPool-1 stores p as a float, later versions as an int; both are accepted.
  const auto* p = c.attr("p");
  if (p && p->i() <= 0 && p->f() <= 0) c.fail("p must be positive");
  infer_pool_shape(c);
}

double pool_kernel_size(const OpContext& c) { return product(c.attr_ints("kernel_shape")); }

// Max: one comparison per window element. Average: (k - 1) adds and one divide. Integer pools
// (uint8/int8 MaxPool) do no floating-point work.
OpCost cost_window_pool(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c)) cost.flops = element_count(c.out(0).shape) * pool_kernel_size(c);
  return cost;
}

// |x|^p and an add per window element, one p-th root per output.
OpCost cost_lp_pool(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c)) cost.flops = element_count(c.out(0).shape) * (2 * pool_kernel_size(c) + 1);
  return cost;
}

// Measured through the pool runners: the window the shape rule read.
OpPlan plan_pool(const OpContext& c) {
  if (!float_data(c)) return unsupported(c.node().op_type + " on non-float tensors");
  if (c.has_output(1)) return unsupported("MaxPool with an Indices output");
  const Shape& x = c.in_shape(0);
  const Window w = read_window(c, x.size() - 2, {});
  for (int64_t d : w.dilations)
    if (d != 1) return unsupported("dilated pooling");
  PoolParams pool;
  pool.max = c.node().op_type == "MaxPool";
  pool.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  pool.kernel = w.kernel;
  pool.strides = w.strides;
  pool.pads = resolved_pads(w, dims_from(x, 2), dims_from(c.out(0).shape, 2));
  return pool;
}

// Global pools: [N, C, spatial...] -> [N, C, 1, ...].
void infer_global_pool(OpContext& c) {
  require_rank_at_least(c, 0, 2, "input X (N, C, spatial...)");
  Shape out = c.in_shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  c.set_output(0, c.in_dtype(0), out);
}

// A global pool is a reduction over the spatial dims of each of the N x C planes.
OpPlan plan_global_pool(const OpContext& c) {
  if (!float_data(c)) return unsupported(c.node().op_type + " on non-float tensors");
  const Shape& in = c.in_shape(0);
  if (in.size() < 3) return unsupported("global pooling needs N, C and spatial dims");
  ReducePlan p;
  p.op = c.node().op_type == "GlobalMaxPool" ? ReduceOp::kMax : ReduceOp::kMean;
  p.outer = in[0] * in[1];
  p.axis_len = extent_product(in, 2, in.size());
  p.inner = 1;
  return p;
}

OpCost cost_global_lp_pool(const OpContext& c) {
  OpCost cost;
  if (computes_in_float(c)) cost.flops = 2 * element_count(c.in_shape(0)) + element_count(c.out(0).shape);
  return cost;
}

// MaxUnpool: scatters X into a zero tensor at the positions I holds.
void infer_max_unpool(OpContext& c) {
  require_rank_at_least(c, 0, 3, "input X (N, C, spatial...)");
  const Shape& x = c.in_shape(0);
  if (c.in_shape(1) != x)
    c.fail("indices I " + shape_to_string(c.in_shape(1)) + " must have the shape of X " + shape_to_string(x));
  const size_t n = x.size() - 2;
  const Window w = read_window(c, n, {});
  if (c.has_input(2)) {
    const std::vector<int64_t> shape = c.require_ints(2, "output_shape");
    if (shape.size() != x.size())
      c.fail("output_shape " + shape_to_string(shape) + " must have rank " + std::to_string(x.size()));
    c.set_output(0, c.in_dtype(0), shape);
    return;
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = (x[2 + i] - 1) * w.strides[i] + w.kernel[i] - w.pads[i] - w.pads[i + n];
    if (d <= 0) c.fail("pads " + shape_to_string(w.pads) + " leave no output in spatial dim " + std::to_string(i));
    out.push_back(d);
  }
  c.set_output(0, c.in_dtype(0), out);
}

}  // namespace

void register_nn_pool_ops(OpRegistry& r) {
  r.add(OpForm::kPooling, {
      {"", "AveragePool", infer_pool, cost_window_pool, plan_pool},
      {"", "MaxPool", infer_max_pool, cost_window_pool, plan_pool},
      {"", "LpPool", infer_lp_pool, cost_lp_pool, not_measured("no GPU kernel yet")},
      {"", "GlobalAveragePool", infer_global_pool, cost_per_input<1>, plan_global_pool},
      {"", "GlobalMaxPool", infer_global_pool, cost_per_input<1>, plan_global_pool},
      {"", "GlobalLpPool", infer_global_pool, cost_global_lp_pool, not_measured("no GPU kernel yet")},
  });
  r.add(OpForm::kScatter, {
      {"", "MaxUnpool", infer_max_unpool, cost_data_movement, not_measured("no GPU kernel yet")},
  });
  // ORT's blocked-channel (NCHWc) forms: the same shapes on the block-padded channel count.
  constexpr std::string_view nchwc = "com.microsoft.nchwc";
  r.add(OpForm::kPooling, {
      {nchwc, "AveragePool", infer_pool, cost_window_pool, {}, inputs(1, 1)},
      {nchwc, "MaxPool", infer_pool, cost_window_pool, {}, inputs(1, 1)},
      {nchwc, "GlobalAveragePool", infer_global_pool, cost_per_input<1>, {}, inputs(1, 1)},
      {nchwc, "GlobalMaxPool", infer_global_pool, cost_per_input<1>, {}, inputs(1, 1)},
  });
}

}  // namespace modelcost
