#include "timing/sampler.h"

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>

#include "core/cuda_check.h"
#include "measure/sampling.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

void tally_stop(WallLedger& ledger, const SampleConfig& config, const StoppingCriterion& criterion, double elapsed_seconds) {
  if (!config.tally) return;
  ledger.add(std::string(config.tally) + ": stopped at " + criterion.reason(elapsed_seconds) + " (count)", 1);
  ledger.add(std::string(config.tally) + ": samples (count)", static_cast<double>(criterion.samples().size()));
}

}  // namespace

NodeMeasurement sample_with_events(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                                   const SampleConfig& config, L2Flush* flush) {
  // Events time what a run without a profiler takes: with CUPTI's kernel records on, each kernel
  // of a graph replay waits longer for the next one.
  CuptiTimer::Pause no_records(timing.cupti());
  cudaEvent_t begin, end;
  MC_CUDA_CHECK(cudaEventCreate(&begin));
  MC_CUDA_CHECK(cudaEventCreate(&end));
  StoppingCriterion criterion(config.rule);
  const auto start = SteadyClock::now();
  sample_until_done(criterion, [&] {
    if (config.cold && flush) flush->flush(stream);
    MC_CUDA_CHECK(cudaEventRecord(begin, stream));
    launch(stream);
    MC_CUDA_CHECK(cudaEventRecord(end, stream));
    MC_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    MC_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms * 1e3;
  });
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  tally_stop(timing.ledger, config, criterion, seconds_since(start));
  NodeMeasurement m = measurement_of(criterion.samples());
  m.implementation = "cuda events";
  return m;
}

std::string short_kernel_name(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  // Drop template arguments and parameter lists: "void ns::kernel<...>(...)" -> "ns::kernel".
  std::string out;
  int depth = 0;
  for (char ch : name) {
    if (ch == '<' || ch == '(') ++depth;
    else if (ch == '>' || ch == ')') --depth;
    else if (depth == 0) out += ch;
  }
  if (out.rfind("void ", 0) == 0) out = out.substr(5);
  if (out.empty()) out = name;
  return out.size() > 100 ? out.substr(0, 100) : out;
}

namespace {

// Below this a candidate's cold first launch may take a multiple of its steady time, and its
// samples cost little: it is warmed up untimed.
constexpr double kProbeWarmupAboveUs = 100;

// The kernel time of one warm-up launch, recorded as a sample would be: a candidate that cannot
// be the fastest is known by it, and its sampling skipped. 0 where CUPTI recorded nothing.
double probe_us(CuptiTimer& timer, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream) {
  timer.collect();
  const uint64_t id = timer.next_external_id();
  timer.push(id);
  launch(stream);
  timer.pop();
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto spans = timer.collect();
  const auto it = spans.find(id);
  return it == spans.end() ? 0 : it->second.kernel_ns / 1e3;
}

}  // namespace

NodeMeasurement sample_launches(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                                const SampleConfig& config, L2Flush* flush) {
  CuptiTimer& timer = timing.cupti();
  const bool may_give_up = config.give_up_above_us > 0;
  {
    std::optional<LedgerScope> warming;
    if (config.warmup_phase) warming.emplace(timing.ledger, config.warmup_phase);
    int warmups = config.warmup_launches;
    // A long candidate's first warm-up is timed: its kernels take little longer there (a
    // library's first-call work runs on the host; cold caches are a small share of a long
    // kernel), so one far past the fastest is given up at once, its sampling skipped.
    if (config.give_up_above_us >= kProbeWarmupAboveUs && warmups > 0 && timer.ok()) {
      const double us = probe_us(timer, launch, stream);
      if (us > config.give_up_above_us) {
        timing.ledger.add("timed choices: candidates given up at their warm-up (count)", 1);
        return measurement_of({us});
      }
      --warmups;
    }
    for (int i = 0; i < warmups; ++i) launch(stream);
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (!timer.ok()) return sample_with_events(timing, launch, stream, config, flush);
  timer.collect();  // drop records of the warm-up

  StoppingCriterion criterion(config.rule);
  std::vector<std::string> kernels;
  double typical_seconds = 0;
  const auto start = SteadyClock::now();
  while (!criterion.done(seconds_since(start))) {
    const int batch = may_give_up && criterion.samples().empty() ? 1 : criterion.next_batch(typical_seconds);
    std::vector<uint64_t> ids;
    for (int i = 0; i < batch; ++i) {
      if (config.cold && flush) flush->flush(stream);
      ids.push_back(timer.next_external_id());
      timer.push(ids.back());
      launch(stream);
      timer.pop();
    }
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
    auto spans = timer.collect();
    for (uint64_t id : ids) {
      auto it = spans.find(id);
      const double us = it == spans.end() ? 0 : it->second.kernel_ns / 1e3;
      criterion.add_sample(us);
      if (kernels.empty() && it != spans.end()) kernels = it->second.names;
    }
    // Wall time per sample, launch overhead included, sizes the next batch.
    typical_seconds = seconds_since(start) / static_cast<double>(criterion.samples().size());
    if (may_give_up && criterion.samples().size() == 1 && criterion.samples()[0] > config.give_up_above_us) break;
  }
  tally_stop(timing.ledger, config, criterion, seconds_since(start));
  NodeMeasurement m = measurement_of(criterion.samples());
  for (const auto& k : kernels) m.kernels.push_back(short_kernel_name(k));
  return m;
}

}  // namespace modelcost::cuda

namespace modelcost::cuda {

double quick_median_us(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                       const CandidateTiming& candidate) {
  const std::string& memo = candidate.memo;
  const auto& known = timing.candidate_medians;
  if (auto it = memo.empty() ? known.end() : known.find(memo); it != known.end()) {
    timing.ledger.add("timed choices: candidates reused (count)", 1);
    return it->second;
  }
  LedgerScope choosing(timing.ledger, "timed choices: candidates timed");
  SampleConfig config;
  config.rule.min_samples = 5;
  config.rule.max_samples = 20;
  config.rule.max_noise = 0.02;
  config.rule.convergence = Convergence::kSpread;
  config.rule.max_seconds = 0.02;
  config.warmup_phase = "timed choices: candidates' warm-up launches";
  if (std::isfinite(candidate.fastest_us)) {
    config.warmup_launches = 1;
    config.give_up_above_us = kGiveUpFactor * candidate.fastest_us;
  }
  const double us = sample_launches(timing, launch, stream, config, nullptr).median_us;
  if (!memo.empty()) timing.candidate_medians.emplace(memo, us);
  return us;
}

}  // namespace modelcost::cuda
