// Op rules: RotaryEmbedding, com.microsoft and ai.onnx (opset 23). It rotates
// rotary_embedding_dim of each head, 3 flops per rotated element (docs/ops/attention.md).
#include "ops/defs/attention_common.h"

namespace modelcost {
namespace {

// com.microsoft: input [batch, sequence, hidden] or [batch, heads, sequence, head_size],
// position_ids, cos_cache, sin_cache.
double ms_rotated_elements(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() != 3 && x.size() != 4) c.fail("input must be 3-D or 4-D, got " + shape_to_string(x));
  const int64_t heads = c.attr_int("num_heads", 0);
  const int64_t half = c.in_rank(2) > 0 ? c.in_shape(2).back() : 0;
  int64_t head_size;
  if (x.size() == 4) head_size = x[3];
  else if (heads > 0) head_size = per_head(c, x[2], heads, "hidden size");
  else head_size = c.attr_int("rotary_embedding_dim", 0) > 0 ? c.attr_int("rotary_embedding_dim", 0) : 2 * half;
  if (head_size <= 0) c.fail("cannot tell the head size: set num_heads or give a cos_cache");
  if (c.attr_int("rotary_embedding_dim", 0) > head_size)
    c.fail("rotary_embedding_dim exceeds the head size " + std::to_string(head_size));
  return element_count(x) * rotary_fraction(c, 2, head_size);
}

// ai.onnx (opset 23): X [batch, sequence, heads, head_size] or [batch, sequence, hidden] with
// num_heads, cos_cache, sin_cache, position_ids.
double onnx_rotated_elements(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  int64_t head_size;
  if (x.size() == 4) head_size = x[3];
  else if (x.size() == 3) head_size = per_head(c, x[2], required_int_attr(c, "num_heads", 1), "hidden size");
  else c.fail("X must be 3-D or 4-D, got " + shape_to_string(x));
  const int64_t dim = c.attr_int("rotary_embedding_dim", 0);
  if (dim > head_size) c.fail("rotary_embedding_dim exceeds the head size " + std::to_string(head_size));
  return element_count(x) * (dim > 0 ? static_cast<double>(dim) / static_cast<double>(head_size) : 1.0);
}

template <double (*Rotated)(const OpContext&)>
void infer_rotary(OpContext& c) {
  Rotated(c);  // validates
  infer_unary(c);
}

template <double (*Rotated)(const OpContext&)>
OpCost cost_rotary(const OpContext& c) {
  OpCost cost;
  cost.flops = kRotaryFlops * Rotated(c);
  return cost;
}

}  // namespace

void register_rotary_embedding_ops(OpRegistry& r) {
  r.add(OpForm::kPointwise, {
      {"com.microsoft", "RotaryEmbedding", infer_rotary<ms_rotated_elements>, cost_rotary<ms_rotated_elements>, {}, inputs(4, 4)},
      {"", "RotaryEmbedding", infer_rotary<onnx_rotated_elements>, cost_rotary<onnx_rotated_elements>, not_measured("no GPU kernel yet"), inputs(3, 4)},
  });
}

}  // namespace modelcost
