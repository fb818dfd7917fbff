// A timed choice between whole strategies for one node, as cudnn.benchmark and TensorRT choose:
// every candidate is prepared on the node's buffers and timed by quick_median_us (CUPTI kernel
// durations); the fastest one runs the node. The implementation column lists every candidate's
// time. A candidate that refuses the configuration at prepare() (a channels-last-only runner in
// an NCHW run) is left out. With a key, the choice is kept in the context: an identical node
// (the same conv in the as-written and the deployed view, a repeated block) prepares only the
// winner.
#include <cstdio>
#include <limits>

#include "core/runner.h"
#include "timing/sampler.h"

namespace modelcost::cuda {
namespace {

struct FastestChoice {
  size_t index = 0;
  std::string summary;  // every candidate's time
  int timed = 0;        // candidates that ran
};

class FastestRunner : public OperatorRunner {
 public:
  FastestRunner(std::vector<std::unique_ptr<OperatorRunner>> candidates, std::string key)
      : candidates_(std::move(candidates)), key_(std::move(key)) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const std::string key = key_.empty() ? "" : "fastest|" + key_ + (ctx.channels_last_half ? "|nhwc" : "|nchw") +
                                                    (ctx.autotune ? "|autotune" : "");
    if (auto known = key.empty() ? nullptr : ctx.choice<FastestChoice>(key)) {
      candidates_[known->index]->prepare(in, out, ctx);
      chosen_ = candidates_[known->index].get();
      choice_ = *known;
      return;
    }
    double best = std::numeric_limits<double>::infinity();
    std::string refused;  // the last candidate's reason, for when none runs
    for (size_t i = 0; i < candidates_.size(); ++i) {
      OperatorRunner& candidate = *candidates_[i];
      try {
        candidate.prepare(in, out, ctx);
      } catch (const Error& e) {
        cudaGetLastError();  // a refused library call leaves no launch error behind
        refused = e.what();
        continue;
      }
      const double us = quick_median_us(*ctx.timing, [&](cudaStream_t s) { candidate.launch(s); }, ctx.stream, {{}, best});
      char buf[64];
      std::snprintf(buf, sizeof(buf), ": %.1f us", us);
      choice_.summary += (choice_.summary.empty() ? "" : "; ") + candidate.implementation() + buf;
      ++choice_.timed;
      if (us < best) {
        best = us;
        chosen_ = &candidate;
        choice_.index = i;
      }
    }
    if (!chosen_) throw Error(kExitRuntime, "no candidate runs this node: " + refused);
    if (!key.empty()) ctx.choices[key] = std::make_shared<FastestChoice>(choice_);
  }

  void launch(cudaStream_t stream) override { chosen_->launch(stream); }

  std::string implementation() const override {
    if (!chosen_) return "no candidate";
    return choice_.timed > 1 ? chosen_->implementation() + " (fastest of " + choice_.summary + ")" : chosen_->implementation();
  }

 private:
  std::vector<std::unique_ptr<OperatorRunner>> candidates_;
  std::string key_;
  OperatorRunner* chosen_ = nullptr;
  FastestChoice choice_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_fastest_runner(std::vector<std::unique_ptr<OperatorRunner>> candidates,
                                                    const std::string& key) {
  if (candidates.size() == 1) return std::move(candidates[0]);
  return std::make_unique<FastestRunner>(std::move(candidates), key);
}

}  // namespace modelcost::cuda
