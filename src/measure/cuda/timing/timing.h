// The timing state of one backend, owned by it (nvbench's model: nothing process-wide): the
// wall-time ledger, the CUPTI kernel timer and the --counters range profiler, and the medians of
// the candidates its timed choices compared. Runners reach it through CudaContext::timing.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>

#include "timing/cupti_timer.h"
#include "timing/range_profiler.h"
#include "timing/wall_ledger.h"

namespace modelcost::cuda {

class Timing {
 public:
  Timing() = default;
  Timing(const Timing&) = delete;  // the timer is known to CUPTI by its address
  Timing& operator=(const Timing&) = delete;

  // The kernel timer, attached on the first call, as the first timed sample needs it: a backend
  // that never times (one that only checks values) leaves CUPTI alone, so a timer made elsewhere
  // in the process can take the records.
  CuptiTimer& cupti();
  // The range profiler, set up on the first call (it initialises CUPTI's profiler and allocates
  // twice the L2); it pauses cupti()'s records while it profiles.
  RangeProfiler& profiler();

  WallLedger ledger;
  // quick_median_us's figures (sampler.h) by memo key: each candidate is timed once per backend.
  std::unordered_map<std::string, double> candidate_medians;

 private:
  std::optional<CuptiTimer> cupti_;        // after ledger, which it books into
  std::optional<RangeProfiler> profiler_;  // after cupti_, whose records it pauses
};

}  // namespace modelcost::cuda
