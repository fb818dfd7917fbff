// Times one enqueue function repeatedly: warm-up, then batches of samples, each wrapped in its
// own CUPTI external correlation id (an L2 flush before each when cold), until the stdrel
// stopping criterion is met. A sample is the summed GPU duration of the kernels it launched.
// Without CUPTI, CUDA events around each sample stand in (their gaps included).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <limits>
#include <string>

#include "measure/stopping_criterion.h"
#include "modelcost/measure.h"
#include "timing/l2_flush.h"

namespace modelcost::cuda {

class Timing;

struct SampleConfig {
  StoppingRule rule;
  bool cold = false;
  int warmup_launches = 2;
  // > 0: a first sample past this ends the sampling there (a candidate that cannot be the fastest).
  double give_up_above_us = 0;
  // Where set, timing's wall ledger counts under this prefix how sampling stopped and the samples.
  const char* tally = nullptr;
  // Where set, the warm-up launches' wall time is booked under this phase (a library's first call
  // of a shape may build or compile its kernel there).
  const char* warmup_phase = nullptr;
};

// The samples are timed by timing.cupti() (CUDA events where it is off) and tallied in its ledger.
NodeMeasurement sample_launches(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                                const SampleConfig& config, L2Flush* flush);

// Times each launch with a pair of CUDA events (no warm-up; config.warmup_launches is ignored),
// an L2 flush before each when config.cold and flush is given, until config.rule is met;
// timing.cupti()'s kernel records are off meanwhile.
NodeMeasurement sample_with_events(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                                   const SampleConfig& config, L2Flush* flush);

// One candidate of a timed choice. With a `memo` key its figure is kept in
// timing.candidate_medians: a later call with the same key returns it without running (the
// per-node, as-written and deployed passes prepare the same candidates on the same shapes; each is
// timed once per backend, as cudnn.benchmark's cache times each shape once). The key names the
// candidate and its work: the chooser, the node's measurement key, the candidate's settings.
// `fastest_us`, the fastest candidate of the choice so far: a candidate whose first timed launch
// takes more than kGiveUpFactor times it stops there, its one sample its figure (for a fastest
// of 67 us or more the warm-up launch is that first timed launch: one launch in all).
struct CandidateTiming {
  std::string memo;
  double fastest_us = std::numeric_limits<double>::infinity();
};
// Past 1.5x the fastest median, one launch's noise cannot make a candidate the fastest, and the
// slowest candidates (an NCHW algorithm on a large conv: tens of milliseconds a launch) took most
// of the wall time of --measure on segmentation networks at batch 32.
constexpr double kGiveUpFactor = 1.5;

// Median GPU time in us of `launch` over a short burst (2 warm-ups, 5 to 20 samples; one warm-up
// and one sample for a candidate past the bound; CUPTI kernel durations like every measurement,
// CUDA events where CUPTI refused): how candidate implementations are compared. Events around a
// lone library call would time its host-side submission too, which for a short cuDNN kernel is
// most of the interval.
double quick_median_us(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                       const CandidateTiming& candidate = {});

// Readable kernel name: demangled, template arguments elided, at most 100 characters.
std::string short_kernel_name(const std::string& mangled);

}  // namespace modelcost::cuda
