// Standard ops added in opsets 23-26 (ONNX 1.18-1.20), which ONNX 1.12's schemas do not know:
// RMSNormalization, Swish, TensorScatter, CumProd. Attention and RotaryEmbedding (opset 23) live
// with the other attention forms in attention.cpp.
#include "ops/defs/fused_helpers.h"

namespace modelcost {
namespace {

// RMSNormalization(X, scale) -> Y: normalises dims [axis, rank) by their root mean square.
void infer_rms_norm(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.empty()) c.fail("input X must have rank >= 1");
  c.axis(c.attr_int("axis", -1), x.size());  // validates
  c.set_output(0, c.in_dtype(0), x);
}

OpCost cost_rms_norm(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  const size_t axis = static_cast<size_t>(c.axis(c.attr_int("axis", -1), x.size()));
  OpCost cost;
  cost.flops = rms_norm_flops(element_count(x), dims_product(x, 0, axis), c.has_input(1));
  return cost;
}

// Swish(x) = x * sigmoid(alpha * x): scale, sigmoid, multiply.
constexpr int kSwishFlops = 2 + static_cast<int>(kSigmoidFlops);

// TensorScatter(past_cache, update, write_indices) -> present_cache: writes `update` into the
// cache along `axis` (a KV-cache append). Output is the cache's shape.
void infer_tensor_scatter(OpContext& c) {
  const Shape& cache = c.in_shape(0);
  const Shape& update = c.in_shape(1);
  if (cache.size() != update.size())
    c.fail("update rank " + std::to_string(update.size()) + " differs from past_cache rank " +
           std::to_string(cache.size()));
  c.set_output(0, c.in_dtype(0), cache);
}

// An in-place runtime reads and writes only the update (and the indices); no arithmetic.
OpCost cost_tensor_scatter(const OpContext& c) {
  OpCost cost;
  const double update_bytes = element_count(c.in_shape(1)) * dtype_size(c.in_dtype(1));
  cost.bytes_read = update_bytes + (c.has_input(2) ? element_count(c.in_shape(2)) * dtype_size(c.in_dtype(2)) : 0);
  return cost;
}

}  // namespace

void register_recent_onnx_ops(OpRegistry& r) {
  r.add(OpForm::kPointwise, {
      {"", "Swish", infer_unary, cost_per_output<kSwishFlops>, not_measured("no GPU kernel yet"), inputs(1, 1)},
  });
  r.add(OpForm::kReduction, {
      {"", "CumProd", infer_unary, cost_per_output<1>, not_measured("no GPU kernel yet"), inputs(2, 2)},
  });
  r.add(OpForm::kNorm, {
      {"", "RMSNormalization", infer_rms_norm, cost_rms_norm, not_measured("no GPU kernel yet"), inputs(2, 2)},
  });
  r.add(OpForm::kScatter, {
      {"", "TensorScatter", infer_tensor_scatter, cost_tensor_scatter, not_measured("no GPU kernel yet"), inputs(2, 3)},
  });
}

}  // namespace modelcost
