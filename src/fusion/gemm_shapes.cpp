// The GEMMs a matrix node runs (include/modelcost/kernel_plan.h): what the tile model of the
// roofline and the kernel classes read.
#include <algorithm>
#include <cmath>

#include "modelcost/kernel_plan.h"
#include "fusion/tensor_access.h"
#include "ops/op_registry.h"

namespace modelcost {

namespace {



// K follows from the MACs the cost rule counted, so it agrees with the FLOPs of the roofline.
std::vector<GemmShape> with_k_from_macs(GemmShape g, double macs) {
  if (!(g.m > 0 && g.n > 0 && g.count > 0 && macs > 0)) return {};
  g.k = macs / (g.m * g.n * g.count);
  return {g};
}

std::vector<GemmShape> conv_gemms(const NodeAnalysis& node, bool transpose) {
  const TensorInfo* x = fusion::shaped_operand(node, 0, false);
  const TensorInfo* w = fusion::shaped_operand(node, 1, false);
  const TensorInfo* y = fusion::shaped_operand(node, 0, true);
  if (!x || !w || !y || x->shape.size() < 3 || w->shape.size() != x->shape.size() || y->shape.size() != x->shape.size())
    return {};
  const Shape &xs = x->shape, &ws = w->shape, &ys = y->shape;
  const double in_channels = static_cast<double>(xs[1]);
  // An NCHW operand pair: the input channels split into whole groups of the weight's (NHWC forms do not).
  if (!transpose && std::fmod(in_channels, static_cast<double>(ws[1])) != 0) return {};
  // Conv weights are [C_out, C_in/group, k...]; ConvTranspose weights [C_in, C_out/group, k...].
  const double groups = transpose ? 1 : in_channels / static_cast<double>(ws[1]);
  const double t_groups = transpose ? static_cast<double>(ys[1]) / static_cast<double>(ws[1]) : 1;
  GemmShape g;
  if (!transpose) {
    g.count = groups;
    g.m = static_cast<double>(ys[0]) * fusion::dims_product(ys, 2, ys.size());
    g.n = static_cast<double>(ys[1]) / groups;
  } else {
    g.count = t_groups;
    g.m = static_cast<double>(xs[0]) * fusion::dims_product(xs, 2, xs.size());
    g.n = static_cast<double>(ws[1]) * fusion::dims_product(ws, 2, ws.size());
  }
  // Depthwise: one input and one output channel per group is a vector op, not a GEMM.
  if (g.count > 1 && g.n <= 1) return {};
  return with_k_from_macs(g, node.cost.macs);
}

std::vector<GemmShape> matmul_gemms(const NodeAnalysis& node) {
  const TensorInfo* b = fusion::shaped_operand(node, 1, false);
  const TensorInfo* y = fusion::shaped_operand(node, 0, true);
  if (!b || !y || y->shape.size() < 2) return {};
  const Shape& ys = y->shape;
  const size_t r = ys.size();
  GemmShape g;
  g.n = static_cast<double>(ys[r - 1]);
  g.m = static_cast<double>(ys[r - 2]);
  const double batch = fusion::dims_product(ys, 0, r - 2);
  // A shared 2-D right operand (a weight) lets the batch rows join M: one GEMM.
  if (b->shape.size() <= 2) g.m *= batch;
  else g.count = batch;
  return with_k_from_macs(g, node.cost.macs);
}

}  // namespace

std::vector<GemmShape> gemm_shapes(const NodeAnalysis& node) {
  if (!node.node || !node.graph || !node.cost.known || !(node.cost.macs > 0)) return {};
  const OpTraits traits = op_traits(node.node->domain, node.node->op_type);
  // The NCHW float forms whose operands the shapes below read: X (or A) is input 0, W (or B) input 1.
  if (traits.integer_math || node.node->domain == "com.microsoft.nchwc") return {};
  if (traits.form == OpForm::kConv) return conv_gemms(node, traits.transposed_conv);
  // Einsum's output dims need not be [batch..., M, N]: it keeps the plain roofline.
  if (traits.form == OpForm::kGemm && !traits.free_dim_order) return matmul_gemms(node);
  return {};
}

}  // namespace modelcost
