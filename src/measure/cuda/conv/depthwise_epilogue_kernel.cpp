// A depthwise conv group whose members after the conv are one activation of its output (ReLU6 as
// Clip, Relu, Sigmoid, HardSwish, SiLU spelled x * Sigmoid(x), or the erf GELU spelled out as
// exporters write it, PVT-v2's and ConvNeXt-style MLPs' depthwise conv), then a BatchNorm (XCiT,
// ConvMixer) and a residual add, each optional: the own depthwise kernel applies them before its
// store, so the conv's output is written once and never read back. Timed against the conv's own
// runner followed by a pointwise chain (as cudnn.benchmark would choose), the faster one kept.
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

// What the store applies after the conv: an activation, then a folded BatchNorm, then a residual.
struct StoreEpilogue {
  Activation activation;   // kIdentity for none
  int batch_norm = -1;     // the BatchNormalization member
  int residual = -1;       // the tensor added last
  int output = -1;         // the tensor the store writes
};

// The members of `rest` a runtime generates into the depthwise kernel's store: `rest` must be, in
// order, at most one activation of t, at most one BatchNorm of its value, and at most one Add of
// a tensor of the output's shape made outside the group, the group's only result the last value
// and no value before it read outside.
std::optional<StoreEpilogue> store_epilogue(const GroupView& view, int t, const std::vector<size_t>& rest) {
  if (rest.empty() || view.is_output(t)) return std::nullopt;
  StoreEpilogue e;
  std::vector<size_t> head = rest;
  const Shape& shape = view.spec(rest.back()).outputs[0].shape;
  int residual_add = -1;
  if (const ElementwisePlan* add = elementwise(view, head.back()); add && add->op == ElementwiseOp::kAdd) {
    residual_add = static_cast<int>(head.back());
    head.pop_back();
  }
  if (!head.empty() && std::holds_alternative<BatchNormPlan>(view.plan(head.back()))) {
    e.batch_norm = static_cast<int>(head.back());
    head.pop_back();
  }
  int value = t;
  if (!head.empty()) {
    const std::optional<Activation> a = single_activation(view, t, head);
    if (!a) return std::nullopt;
    e.activation = *a;
    value = a->output;
  }
  if (e.batch_norm >= 0) {
    const Node& bn = view.node(size_t(e.batch_norm));
    if (value != t && view.is_output(value)) return std::nullopt;
    if (view.source(bn.inputs[0]) != value || view.spec(size_t(e.batch_norm)).outputs[0].shape != shape) return std::nullopt;
    value = bn.outputs[0];
  }
  if (residual_add >= 0) {
    const Node& add = view.node(size_t(residual_add));
    if (add.inputs.size() != 2 || (value != t && view.is_output(value))) return std::nullopt;
    const int mine = view.source(add.inputs[0]) == value ? 0 : view.source(add.inputs[1]) == value ? 1 : -1;
    if (mine < 0) return std::nullopt;
    e.residual = add.inputs[1 - mine];
    if (view.producer(e.residual) >= 0 || view.spec(size_t(residual_add)).inputs[1 - mine].shape != shape) return std::nullopt;
    value = add.outputs[0];
  }
  e.output = value;
  for (int out : view.group.outputs)
    if (out != e.output) return std::nullopt;
  return e;
}

class RunnerKernel : public GroupKernel {
 public:
  RunnerKernel(std::unique_ptr<OperatorRunner> runner, std::optional<FoldedBatchNorm> folded)
      : runner_(std::move(runner)), folded_(std::move(folded)) {}
  void launch(cudaStream_t stream) override { runner_->launch(stream); }
  std::string implementation() const override { return runner_->implementation(); }

 private:
  std::unique_ptr<OperatorRunner> runner_;
  std::optional<FoldedBatchNorm> folded_;  // the scale and shift the store reads
};

}  // namespace

std::unique_ptr<GroupKernel> make_depthwise_epilogue_kernel(const GroupView& view, size_t anchor,
                                                            const std::vector<size_t>& rest,
                                                            std::unique_ptr<GroupKernel> separate) {
  const auto* conv = std::get_if<ConvParams>(&view.plan(anchor));
  const std::optional<StoreEpilogue> e =
      conv && is_depthwise_2d(*conv) ? store_epilogue(view, view.node(anchor).outputs[0], rest) : std::nullopt;
  if (!e) return separate;
  DepthwiseEpilogue store{e->activation.op, e->activation.alpha, e->activation.beta};
  std::optional<FoldedBatchNorm> folded;
  if (e->batch_norm >= 0) {
    folded = fold_batch_norm(view, size_t(e->batch_norm));
    store.scale = folded->scale;
    store.shift = folded->shift;
  }
  store.residual = e->residual >= 0 ? view.buffers.data(e->residual) : nullptr;
  std::string why;
  auto runner = make_depthwise_conv_runner(view.spec(anchor), *conv, &why, store);
  if (!runner) return separate;
  std::vector<DeviceTensor> out = view.buffers.outputs(rest.back());
  runner->prepare(view.buffers.inputs(anchor), {out[0]}, view.cuda);
  auto fused = std::make_unique<RunnerKernel>(std::move(runner), std::move(folded));
  return make_timed_choice(std::move(fused), std::move(separate), view.cuda,
                           group_measurement_key(view, "depthwise epilogue"));
}

}  // namespace modelcost::cuda
