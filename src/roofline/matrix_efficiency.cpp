// The tile model of matrix kernels (docs/roofline.md, "Tile model").
#include "matrix_efficiency.h"

#include <algorithm>
#include <cmath>

#include "modelcost/roofline.h"

namespace modelcost {

namespace {

struct Tile {
  double m, n;
};
// Output tiles of CUTLASS's Hopper (SM90) GEMM kernels: 128x256 and 128x128 with two consumer
// warpgroups, 128x64 and 64x64 for small problems.
constexpr Tile kTiles[] = {{128, 256}, {128, 128}, {128, 64}, {64, 64}};
// K advances in blocks of 64 fp16 elements (CUTLASS SM90 default tile K), so K pads to 64.
constexpr double kTileK = 64;
// Split-K partial sums are fp32; each split writes its partial and the reduction reads it.
constexpr double kPartialBytes = 4;

const TensorInfo* tensor_of(const NodeAnalysis& node, size_t input_or_output, bool output) {
  const auto& ids = output ? node.node->outputs : node.node->inputs;
  if (input_or_output >= ids.size() || ids[input_or_output] < 0) return nullptr;
  const TensorInfo& t = node.graph->tensors[ids[input_or_output]];
  if (!t.has_shape) return nullptr;
  for (int64_t d : t.shape)
    if (d <= 0) return nullptr;
  return &t;
}

double product(const Shape& s, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

// K follows from the MACs the cost rule counted, so it agrees with the FLOPs of the roofline.
std::vector<GemmShape> with_k_from_macs(GemmShape g, double macs) {
  if (!(g.m > 0 && g.n > 0 && g.count > 0 && macs > 0)) return {};
  g.k = macs / (g.m * g.n * g.count);
  return {g};
}

std::vector<GemmShape> conv_gemms(const NodeAnalysis& node, bool transpose) {
  const TensorInfo* x = tensor_of(node, 0, false);
  const TensorInfo* w = tensor_of(node, 1, false);
  const TensorInfo* y = tensor_of(node, 0, true);
  if (!x || !w || !y || x->shape.size() < 3 || w->shape.size() != x->shape.size() || y->shape.size() != x->shape.size())
    return {};
  const Shape &xs = x->shape, &ws = w->shape, &ys = y->shape;
  const double in_channels = static_cast<double>(xs[1]);
  // Conv weights are [C_out, C_in/group, k...]; ConvTranspose weights [C_in, C_out/group, k...].
  const double groups = transpose ? 1 : in_channels / static_cast<double>(ws[1]);
  const double t_groups = transpose ? static_cast<double>(ys[1]) / static_cast<double>(ws[1]) : 1;
  GemmShape g;
  if (!transpose) {
    g.count = groups;
    g.m = static_cast<double>(ys[0]) * product(ys, 2, ys.size());
    g.n = static_cast<double>(ys[1]) / groups;
  } else {
    g.count = t_groups;
    g.m = static_cast<double>(xs[0]) * product(xs, 2, xs.size());
    g.n = static_cast<double>(ws[1]) * product(ws, 2, ws.size());
  }
  // Depthwise: one input and one output channel per group is a vector op, not a GEMM.
  if (g.count > 1 && g.n <= 1) return {};
  return with_k_from_macs(g, node.cost.macs);
}

std::vector<GemmShape> matmul_gemms(const NodeAnalysis& node) {
  const TensorInfo* b = tensor_of(node, 1, false);
  const TensorInfo* y = tensor_of(node, 0, true);
  if (!b || !y || y->shape.size() < 2) return {};
  const Shape& ys = y->shape;
  const size_t r = ys.size();
  GemmShape g;
  g.n = static_cast<double>(ys[r - 1]);
  g.m = static_cast<double>(ys[r - 2]);
  const double batch = product(ys, 0, r - 2);
  // A shared 2-D right operand (a weight) lets the batch rows join M: one GEMM.
  if (b->shape.size() <= 2) g.m *= batch;
  else g.count = batch;
  return with_k_from_macs(g, node.cost.macs);
}

std::vector<GemmShape> gemm_gemms(const NodeAnalysis& node) {
  const TensorInfo* y = tensor_of(node, 0, true);
  if (!y || y->shape.size() != 2) return {};
  GemmShape g;
  g.m = static_cast<double>(y->shape[0]);
  g.n = static_cast<double>(y->shape[1]);
  return with_k_from_macs(g, node.cost.macs);
}

}  // namespace

std::vector<GemmShape> gemm_shapes(const NodeAnalysis& node) {
  if (!node.node || !node.graph || !node.cost.known || !(node.cost.macs > 0) || !node.node->domain.empty()) return {};
  const std::string& op = node.node->op_type;
  if (op == "Conv") return conv_gemms(node, false);
  if (op == "ConvTranspose") return conv_gemms(node, true);
  if (op == "MatMul") return matmul_gemms(node);
  if (op == "Gemm") return gemm_gemms(node);
  return {};
}

TileChoice best_tiling(const GemmShape& gemm, const SmArray& sms) {
  TileChoice best;
  const double per_sm_flops = sms.flops_per_s / sms.sm_count;
  const double k_blocks = std::ceil(gemm.k / kTileK);
  const double max_splits = std::min(k_blocks, sms.sm_count);
  for (const Tile& tile : kTiles) {
    const double tiles = std::ceil(gemm.m / tile.m) * std::ceil(gemm.n / tile.n) * gemm.count;
    for (double splits = 1; splits <= max_splits; ++splits) {
      const double k_per_split = std::ceil(k_blocks / splits) * kTileK;
      const double waves = std::ceil(tiles * splits / sms.sm_count);
      const double tile_s = 2 * tile.m * tile.n * k_per_split / per_sm_flops;
      const double reduction_bytes = splits > 1 ? 2 * gemm.m * gemm.n * gemm.count * splits * kPartialBytes : 0;
      const double us = (waves * tile_s + reduction_bytes / sms.bandwidth_bytes_per_s) * 1e6;
      if (best.us == 0 || us < best.us) best = {tile.m, tile.n, splits, waves, us};
    }
  }
  return best;
}

KernelClass kernel_class_of(const NodeAnalysis& anchor, bool matrix) {
  if (!matrix || !anchor.node) return {"pointwise", 0};
  const std::string& op = anchor.node->op_type;
  const bool conv = anchor.node->domain.empty() && (op == "Conv" || op == "ConvTranspose");
  const std::vector<GemmShape> gemms = gemm_shapes(anchor);
  if (conv) {
    const TensorInfo* w = tensor_of(anchor, 1, false);
    const double taps = w ? product(w->shape, 2, w->shape.size()) : 0;
    // No GEMM shape: one channel per group, a depthwise conv whose K is its taps.
    if (gemms.empty()) return {"depthwise", taps};
    return {taps == 1 ? "conv1x1" : "conv", gemms.front().k};
  }
  return {"gemm", gemms.empty() ? 0 : gemms.front().k};
}

KernelClass kernel_class_of(const FusedGroup& group, const Analysis& analysis) {
  if (group.pattern == "attention")
    for (size_t member : group.members) {
      const NodeAnalysis& node = analysis.nodes[member];
      if (node.node && node.node->op_type != "MatMul") continue;
      const std::vector<GemmShape> gemms = gemm_shapes(node);  // the first product: Q K^T
      if (!gemms.empty()) return {"attention", gemms.front().n};
    }
  return kernel_class_of(analysis.nodes[group.anchor], group.matrix);
}

double tiled_matrix_us(const FusedGroup& group, const Analysis& analysis, const SmArray& sms) {
  if (!(sms.sm_count > 0 && sms.flops_per_s > 0 && sms.bandwidth_bytes_per_s > 0)) return 0;
  double us = 0;
  // An attention group's two products per head run one after the other.
  for (size_t member : group.members)
    for (const GemmShape& g : gemm_shapes(analysis.nodes[member])) us += best_tiling(g, sms).us;
  return us;
}

}  // namespace modelcost
