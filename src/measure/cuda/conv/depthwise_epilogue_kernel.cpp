// A depthwise conv group whose members after the conv are one activation of its output (ReLU6 as
// Clip, Relu, Sigmoid, HardSwish, SiLU spelled x * Sigmoid(x), or the erf GELU spelled out as
// exporters write it, PVT-v2's and ConvNeXt-style MLPs' depthwise conv): the own depthwise kernel
// applies the activation before its store, so the conv's output is written once and never read
// back. Timed against the conv's own runner followed by a pointwise chain (as cudnn.benchmark
// would choose), the faster one kept.
#include <algorithm>
#include <optional>

#include "core/kernels.h"
#include "core/runner.h"
#include "deployed/group_runner.h"

namespace modelcost::cuda {
namespace {

struct Activation {
  ElementwiseOp op = ElementwiseOp::kIdentity;
  float alpha = 0, beta = 0;
  int output = -1;  // the tensor the activation writes
};

const ElementwisePlan* elementwise(const GroupView& view, size_t m) { return std::get_if<ElementwisePlan>(&view.plan(m)); }

// The erf GELU of tensor t where `rest` (is_erf_gelu) reads t (or a layout view of it) and its
// last member writes the group's only result, or nullopt.
std::optional<Activation> erf_gelu(const GroupView& view, int t, const std::vector<size_t>& rest) {
  const bool reads_t = std::any_of(rest.begin(), rest.end(), [&](size_t m) {
    for (int in : view.node(m).inputs)
      if (view.view_source(in) == t) return true;
    return false;
  });
  const int result = view.node(rest.back()).outputs[0];
  for (int out : view.group.outputs)
    if (out != result) return std::nullopt;
  return reads_t ? std::optional<Activation>(Activation{ElementwiseOp::kGelu, 0, 0, result}) : std::nullopt;
}

// The one activation `rest` applies to tensor t, or nullopt.
std::optional<Activation> single_activation(const GroupView& view, int t, const std::vector<size_t>& rest) {
  if (view.is_output(t) || rest.empty()) return std::nullopt;
  if (is_erf_gelu(view, rest)) return erf_gelu(view, t, rest);
  if (rest.size() > 2) return std::nullopt;
  const Node& first = view.node(rest[0]);
  const ElementwisePlan* p = elementwise(view, rest[0]);
  if (!p || first.inputs.empty() || view.source(first.inputs[0]) != t) return std::nullopt;
  Activation a{p->op, static_cast<float>(p->alpha), static_cast<float>(p->beta), first.outputs[0]};
  if (rest.size() == 1)
    return elementwise_arity(p->op) == 1 && depthwise_activation_supported(p->op) ? std::optional<Activation>(a)
                                                                                  : std::nullopt;
  // x * Sigmoid(x)
  const Node& mul = view.node(rest[1]);
  const ElementwisePlan* q = elementwise(view, rest[1]);
  if (p->op != ElementwiseOp::kSigmoid || view.is_output(a.output) || !q || q->op != ElementwiseOp::kMul ||
      mul.inputs.size() != 2)
    return std::nullopt;
  const int x = view.source(mul.inputs[0]), y = view.source(mul.inputs[1]);
  if (!((x == t && y == a.output) || (x == a.output && y == t))) return std::nullopt;
  return Activation{ElementwiseOp::kSilu, 0, 0, mul.outputs[0]};
}

class RunnerKernel : public GroupKernel {
 public:
  explicit RunnerKernel(std::unique_ptr<OperatorRunner> runner) : runner_(std::move(runner)) {}
  void launch(cudaStream_t stream) override { runner_->launch(stream); }
  std::string implementation() const override { return runner_->implementation(); }

 private:
  std::unique_ptr<OperatorRunner> runner_;
};

}  // namespace

std::unique_ptr<GroupKernel> make_depthwise_epilogue_kernel(const GroupView& view, size_t anchor,
                                                            const std::vector<size_t>& rest,
                                                            std::unique_ptr<GroupKernel> separate) {
  const auto* conv = std::get_if<ConvParams>(&view.plan(anchor));
  const std::optional<Activation> a =
      conv && is_depthwise_2d(*conv) ? single_activation(view, view.node(anchor).outputs[0], rest) : std::nullopt;
  if (!a || !view.is_output(a->output)) return separate;
  std::string why;
  auto runner = make_depthwise_conv_runner(view.spec(anchor), *conv, &why, a->op, a->alpha, a->beta);
  if (!runner) return separate;
  size_t last = rest.back();
  std::vector<DeviceTensor> out = view.buffers.outputs(last);
  runner->prepare(view.buffers.inputs(anchor), {out[0]}, view.cuda);
  auto fused = std::make_unique<RunnerKernel>(std::move(runner));
  return make_timed_choice(std::move(fused), std::move(separate), view.cuda.stream,
                           group_measurement_key(view, "depthwise epilogue"));
}

}  // namespace modelcost::cuda
