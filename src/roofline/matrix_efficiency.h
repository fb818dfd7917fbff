// How well a matrix kernel fills the GPU: its GEMMs cut into output tiles, the tiles spread in
// waves over the SMs, as a tiling library would choose them (docs/roofline.md, "Tile model").
#pragma once
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/fusion.h"
#include "modelcost/kernel_plan.h"

namespace modelcost {

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

// The fastest tile shape and split-K factor for one GEMM shape.
TileChoice best_tiling(const GemmShape& gemm, const SmArray& sms);

// Compute time of a group's matrix members under the tile model, in us; 0 when none is covered.
double tiled_matrix_us(const FusedGroup& group, const Analysis& analysis, const SmArray& sms);

}  // namespace modelcost
