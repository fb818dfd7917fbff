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

}  // namespace

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

double tiled_matrix_us(const FusedGroup& group, const Analysis& analysis, const SmArray& sms) {
  if (!(sms.sm_count > 0 && sms.flops_per_s > 0 && sms.bandwidth_bytes_per_s > 0)) return 0;
  double us = 0;
  // An attention group's two products per head run one after the other.
  for (size_t member : group.members)
    for (const GemmShape& g : gemm_shapes(analysis.nodes[member])) us += best_tiling(g, sms).us;
  return us;
}

}  // namespace modelcost
