// A timed choice between whole strategies for one node, as cudnn.benchmark and TensorRT choose:
// every candidate is prepared on the node's buffers and timed by quick_median_us (CUPTI kernel
// durations); the fastest one runs the node. The implementation column lists every candidate's
// time.
#include <cstdio>
#include <limits>

#include "measure/cuda/runner.h"
#include "measure/cuda/sampler.h"

namespace modelcost::cuda {
namespace {

class FastestRunner : public OperatorRunner {
 public:
  FastestRunner(std::vector<std::unique_ptr<OperatorRunner>> candidates, std::string work)
      : candidates_(std::move(candidates)), work_(std::move(work)) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    double best = std::numeric_limits<double>::infinity();
    std::string times;
    for (auto& candidate : candidates_) {
      candidate->prepare(in, out, ctx);
      const std::string memo = work_.empty() ? "" : "fastest of|" + work_ + "|" + candidate->implementation();
      const double us = quick_median_us([&](cudaStream_t s) { candidate->launch(s); }, ctx.stream, memo);
      char buf[64];
      std::snprintf(buf, sizeof(buf), ": %.1f us", us);
      times += (times.empty() ? "" : "; ") + candidate->implementation() + buf;
      if (us < best) {
        best = us;
        chosen_ = candidate.get();
      }
    }
    summary_ = times;
  }

  void launch(cudaStream_t stream) override { chosen_->launch(stream); }

  std::string implementation() const override {
    return chosen_ ? chosen_->implementation() + " (fastest of " + summary_ + ")" : "no candidate";
  }

 private:
  std::vector<std::unique_ptr<OperatorRunner>> candidates_;
  OperatorRunner* chosen_ = nullptr;
  std::string summary_;
  std::string work_;  // the node's measurement key: candidates' times are timed once per process
};

}  // namespace

std::unique_ptr<OperatorRunner> make_fastest_runner(std::vector<std::unique_ptr<OperatorRunner>> candidates,
                                                    const std::string& work) {
  if (candidates.size() == 1) return std::move(candidates[0]);
  return std::make_unique<FastestRunner>(std::move(candidates), work);
}

}  // namespace modelcost::cuda
