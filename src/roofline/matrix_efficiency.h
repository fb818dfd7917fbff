// How well a matrix kernel fills the GPU: its GEMMs cut into output tiles, the tiles spread in
// waves over the SMs, as a tiling library would choose them (docs/roofline.md, "Tile model").
#pragma once
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/fusion.h"

namespace modelcost {

// `count` independent GEMMs of M x N outputs, each summing over K (groups, heads, batch).
struct GemmShape {
  double m = 0, n = 0, k = 0, count = 1;
};

// The SM array that runs the tiles: its size and the device-wide ceilings it shares.
struct SmArray {
  double sm_count = 0;
  double flops_per_s = 0;            // matrix peak of the whole device
  double bandwidth_bytes_per_s = 0;  // for the split-K partial sums
};

struct TileChoice {
  double tile_m = 0, tile_n = 0;
  double splits = 1;  // split-K factor
  double waves = 0;
  double us = 0;      // waves x tile time + split-K reduction
};

// The GEMMs a matrix node runs; empty when it has none the tile model covers (depthwise
// convolutions, fused com.microsoft forms, unknown shapes): those keep the plain roofline.
std::vector<GemmShape> gemm_shapes(const NodeAnalysis& node);

// The fastest tile shape and split-K factor for one GEMM shape.
TileChoice best_tiling(const GemmShape& gemm, const SmArray& sms);

// Compute time of a group's matrix members under the tile model, in us; 0 when none is covered.
double tiled_matrix_us(const FusedGroup& group, const Analysis& analysis, const SmArray& sms);

// The class of library kernel a node (or the group it anchors) runs as, with its reduction length
// K, for the calibrated kernel curves of hwdb (docs/roofline.md, "Calibrated kernels"): gemm,
// conv1x1, conv or depthwise for matrix work, pointwise for the rest.
struct KernelClass {
  std::string name;
  double k = 0;
};
KernelClass kernel_class_of(const NodeAnalysis& anchor, bool matrix);
// A deployed group's class: an attention group is one flash-attention kernel (class attention,
// K = the key length, the N of its scores product); any other group is its anchor's.
KernelClass kernel_class_of(const FusedGroup& group, const Analysis& analysis);

}  // namespace modelcost
