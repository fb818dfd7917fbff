#include "timing/timing.h"

namespace modelcost::cuda {

CuptiTimer& Timing::cupti() {
  if (!cupti_) cupti_.emplace(ledger);
  return *cupti_;
}

RangeProfiler& Timing::profiler() {
  if (!profiler_) profiler_.emplace(cupti());
  return *profiler_;
}

}  // namespace modelcost::cuda
