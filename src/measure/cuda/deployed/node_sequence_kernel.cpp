// The fallback of a group no fused runner covers: its members' own per-node runners, in order,
// on the model's buffers; the composition of several group kernels into one; and the timed
// choice between two ways to run a group.
#include <fmt/format.h>

#include "deployed/group_runner.h"
#include "timing/sampler.h"

namespace modelcost::cuda {
namespace {

class NodeSequence : public GroupKernel {
 public:
  explicit NodeSequence(std::vector<std::unique_ptr<OperatorRunner>> runners) : runners_(std::move(runners)) {}
  void launch(cudaStream_t stream) override {
    for (auto& r : runners_) r->launch(stream);
  }
  const OperatorRunner* lone_runner() const override { return runners_.size() == 1 ? runners_[0].get() : nullptr; }
  std::string implementation() const override {
    std::string s = "per-node: ";
    for (size_t i = 0; i < runners_.size(); ++i) s += (i ? "; " : "") + runners_[i]->implementation();
    return s;
  }

 private:
  std::vector<std::unique_ptr<OperatorRunner>> runners_;
};

class KernelSequence : public GroupKernel {
 public:
  explicit KernelSequence(std::vector<std::unique_ptr<GroupKernel>> kernels) : kernels_(std::move(kernels)) {}
  void launch(cudaStream_t stream) override {
    for (auto& k : kernels_) k->launch(stream);
  }
  std::string implementation() const override {
    std::string s;
    for (size_t i = 0; i < kernels_.size(); ++i) s += (i ? " + " : "") + kernels_[i]->implementation();
    return s;
  }

 private:
  std::vector<std::unique_ptr<GroupKernel>> kernels_;
};

// The faster of two ways to run a group, the other's time noted.
class TimedChoice : public GroupKernel {
 public:
  TimedChoice(std::unique_ptr<GroupKernel> a, std::unique_ptr<GroupKernel> b, CudaContext& cuda, const std::string& work) {
    auto memo = [&](const GroupKernel& k) { return work.empty() ? std::string() : "group|" + work + "|" + k.implementation(); };
    const double a_us = quick_median_us(*cuda.timing, [&](cudaStream_t s) { a->launch(s); }, cuda.stream, {memo(*a)});
    const double b_us = quick_median_us(*cuda.timing, [&](cudaStream_t s) { b->launch(s); }, cuda.stream, {memo(*b), a_us});
    const bool first = a_us <= b_us;
    note_ = fmt::format(" (timed choice: {:.1f} us against {:.1f} us for {})", first ? a_us : b_us, first ? b_us : a_us,
                        (first ? b : a)->implementation());
    chosen_ = std::move(first ? a : b);
  }
  void launch(cudaStream_t stream) override { chosen_->launch(stream); }
  std::string implementation() const override { return chosen_->implementation() + note_; }
  const OperatorRunner* lone_runner() const override { return chosen_->lone_runner(); }

 private:
  std::unique_ptr<GroupKernel> chosen_;
  std::string note_;
};

}  // namespace

std::unique_ptr<GroupKernel> make_node_sequence(const GroupView& view, const std::vector<size_t>& members) {
  std::vector<std::unique_ptr<OperatorRunner>> runners;
  for (size_t m : members) {
    std::string reason;
    auto runner = make_runner(view.spec(m), view.plan(m), &reason);
    if (!runner) throw Error(kExitRuntime, "node '" + view.node(m).name + "': " + reason);
    runner->prepare(view.buffers.inputs(m), view.buffers.outputs(m), view.cuda);
    runners.push_back(std::move(runner));
  }
  return std::make_unique<NodeSequence>(std::move(runners));
}

std::unique_ptr<GroupKernel> make_kernel_sequence(std::vector<std::unique_ptr<GroupKernel>> kernels) {
  if (kernels.size() == 1) return std::move(kernels.front());
  return std::make_unique<KernelSequence>(std::move(kernels));
}

std::unique_ptr<GroupKernel> make_timed_choice(std::unique_ptr<GroupKernel> a, std::unique_ptr<GroupKernel> b,
                                               CudaContext& cuda, const std::string& work) {
  return std::make_unique<TimedChoice>(std::move(a), std::move(b), cuda, work);
}

}  // namespace modelcost::cuda
