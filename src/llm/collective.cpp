// Collective communication time for tensor parallelism (docs/llm.md, "Tensor parallelism").
#include <algorithm>
#include <cmath>

#include "llm/step_model.h"
#include "modelcost/llm.h"

namespace modelcost {

double allreduce_ms(double bytes, int64_t ranks, double bus_gbps, double latency_us, Collective collective) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(ranks);
  const double bandwidth = bus_gbps * 1e9;
  // Ring: reduce-scatter then all-gather, 2(n-1) steps each moving bytes/n over every link.
  const double ring = 2 * (n - 1) * latency_us * 1e-6 + 2 * (n - 1) / n * bytes / bandwidth;
  // Double binary tree: 2 log2(n) latency steps; pipelined, each link carries the whole buffer twice.
  const double tree = 2 * std::ceil(std::log2(n)) * latency_us * 1e-6 + 2 * bytes / bandwidth;
  switch (collective) {
    case Collective::kRing: return ring * 1e3;
    case Collective::kTree: return tree * 1e3;
    default: return std::min(ring, tree) * 1e3;
  }
}

double step_allreduce_ms(const StepSetup& s, double bytes) {
  const double model = allreduce_ms(bytes, s.tp, s.allreduce_gbps, s.allreduce_latency_us, s.collective);
  const AllReduceCurve& curve = s.allreduce_curve;
  if (curve.empty() || model <= 0) return model;
  // NCCL's protocol switches shape the curve; how it grows with the ranks is the model's.
  const double at_curve_ranks = allreduce_ms(bytes, curve.ranks, s.allreduce_gbps, s.allreduce_latency_us, s.collective);
  return curve.us(bytes) / 1e3 * (at_curve_ranks > 0 ? model / at_curve_ranks : 1);
}

}  // namespace modelcost
