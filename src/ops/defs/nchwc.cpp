// ORT's NCHWc layout ops (com.microsoft.nchwc, written by ORT_ENABLE_ALL saves): the reorders into
// and out of the blocked-channel layout, and its nearest/linear Upsample. Conv and the pools of
// the domain share the rules of their standard forms (com_microsoft.cpp, nn_pool.cpp).
#include <onnx/onnx_pb.h>

#include <cmath>

#include "ops/defs/fused_helpers.h"

namespace modelcost {
namespace {

// MLAS' block size on AVX2 machines; used only when no consumer shows the padded channel count.
constexpr int64_t kDefaultBlock = 8;

// The padded channel count: the channels (times group) of a nchwc Conv reading this output, else
// the channels rounded up to the default block.
int64_t padded_channels(const OpContext& c, int64_t channels) {
  const int out = c.node().outputs.empty() ? -1 : c.node().outputs[0];
  for (const Node& n : c.graph().nodes) {
    if (n.domain != "com.microsoft.nchwc" || n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[0] != out) continue;
    const TensorInfo& w = c.graph().tensors[n.inputs[1]];
    if (!w.has_shape || w.shape.size() < 2) continue;
    int64_t group = 1;
    for (const auto& a : n.proto->attribute())
      if (a.name() == "group") group = a.i();
    return dim_product(c, w.shape[1], group, "the reading Conv's channels x group");
  }
  return (channels + kDefaultBlock - 1) / kDefaultBlock * kDefaultBlock;
}

// ReorderInput: NCHW (or NHWC with channels_last) -> NCHWc with the channels padded to the block.
void infer_reorder_input(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 2) c.fail("input rank " + std::to_string(x.size()) + " is below 2");
  const bool last = c.attr_int("channels_last", 0) != 0;
  Shape out = {x[0], padded_channels(c, last ? x.back() : x[1])};
  for (size_t i = 0; i + 2 < x.size(); ++i) out.push_back(x[(last ? 1 : 2) + i]);
  c.set_output(0, c.in_dtype(0), out);
}

// ReorderOutput: NCHWc -> NCHW (or NHWC) with the real channel count of attribute `channels`.
void infer_reorder_output(OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.size() < 2) c.fail("input rank " + std::to_string(x.size()) + " is below 2");
  const int64_t channels = c.attr_int("channels", 0);
  if (channels <= 0 || channels > x[1])
    c.fail("channels = " + std::to_string(channels) + " must be in 1.." + std::to_string(x[1]));
  const bool last = c.attr_int("channels_last", 0) != 0;
  Shape out = {x[0]};
  if (!last) out.push_back(channels);
  for (size_t i = 2; i < x.size(); ++i) out.push_back(x[i]);
  if (last) out.push_back(channels);
  c.set_output(0, c.in_dtype(0), out);
}

// Upsample: integer `scales` per dim.
void infer_upsample(OpContext& c) {
  const Shape& x = c.in_shape(0);
  const std::vector<int64_t> scales = c.attr_ints("scales");
  if (scales.size() != x.size())
    c.fail("scales has " + std::to_string(scales.size()) + " values for a rank-" + std::to_string(x.size()) + " input");
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (scales[i] <= 0) c.fail("scales must be positive");
    out.push_back(x[i] * scales[i]);
  }
  c.set_output(0, c.in_dtype(0), out);
}

// Nearest copies; linear weighs 2^d inputs per output over the d spatial dims, as Resize counts.
OpCost cost_upsample(const OpContext& c) {
  OpCost cost;
  if (c.attr_string("mode", "nearest") == "linear") {
    const double points = std::pow(2.0, static_cast<double>(c.in_rank(0)) - 2);
    cost.flops = (2 * points - 1) * output_elements(c);
  }
  return cost;
}

}  // namespace

void register_nchwc_ops(OpRegistry& r) {
  constexpr std::string_view nchwc = "com.microsoft.nchwc";
  r.add(OpForm::kLayout, {
      {nchwc, "ReorderInput", infer_reorder_input, cost_data_movement, {}, inputs(1, 1)},
      {nchwc, "ReorderOutput", infer_reorder_output, cost_data_movement, {}, inputs(1, 1)},
  });
  r.add(OpForm::kOther, {
      {nchwc, "Upsample", infer_upsample, cost_upsample, {}, inputs(1, 1)},
  });
}

}  // namespace modelcost
