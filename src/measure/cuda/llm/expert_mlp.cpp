// ExpertMlp (expert_mlp.h).
#include "llm/expert_mlp.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/buffer_carver.h"
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "llm/step_kernels.h"
#include "measure/step_roles.h"

namespace modelcost::cuda {
namespace {

// The router's outputs padded to a multiple of 16 (the routing reads the experts' columns only):
// a few rows then take the skinny kernel in one launch instead of a split-K pair.
int64_t router_width(int64_t experts) { return (experts + 15) / 16 * 16; }

}  // namespace

void check_expert_shape(const ExpertMlpShape& s) {
  auto fail = [](const std::string& why) { throw Error(kExitRuntime, "the deployed step cannot run its experts: " + why); };
  if (s.experts < 1 || s.experts > kMostExperts) fail(fmt::format("{} routed experts (the routing kernel takes 1 to {})", s.experts, kMostExperts));
  if (s.top_k < 1 || s.top_k > s.experts || s.top_k > kMostExpertsPerToken)
    fail(fmt::format("{} experts per token (1 to the experts, at most {})", s.top_k, kMostExpertsPerToken));
  if (s.width < 32 || s.width % 32) fail(fmt::format("an expert width of {} per device (a multiple of 32)", s.width));
  if (s.hidden % 32) fail(fmt::format("a hidden width of {} (the grouped products take multiples of 32)", s.hidden));
  if (s.shared_width % 2) fail("an odd shared expert width per device");
}

ExpertMlp::ExpertMlp(const ExpertMlpShape& shape, cublasLtHandle_t lt, GemmWorkspace workspace, int seed, cudaStream_t stream)
    : s_(shape) {
  check_expert_shape(s_);
  const int64_t pairs = s_.rows * s_.top_k;
  routing_shape_ = {s_.rows, s_.experts, s_.top_k, expert_tile_rows(double(pairs) / double(std::min(pairs, s_.experts)))};
  allocate(seed, stream);
  router_gemm_ = std::make_unique<StepGemm>(lt, StepGemmShape{s_.rows, router_width(s_.experts), s_.hidden, false}, workspace);
  if (s_.shared_width > 0) {
    shared_gate_up_gemm_ = std::make_unique<StepGemm>(lt, StepGemmShape{s_.rows, 2 * s_.shared_width, s_.hidden, false}, workspace);
    // After the routed experts' sum, which already holds the residual on the first rank.
    shared_down_gemm_ = std::make_unique<StepGemm>(lt, StepGemmShape{s_.rows, s_.hidden, s_.shared_width, true}, workspace);
  }
}

void ExpertMlp::allocate(int seed, cudaStream_t stream) {
  const int64_t h = s_.hidden, e = s_.experts, w = s_.width, sw = s_.shared_width;
  BufferCarver p;
  std::vector<std::array<size_t, 5>> offsets(s_.layers);
  for (auto& o : offsets) o = {p.take(router_width(e) * h), p.take(e * 2 * w * h), p.take(e * h * w), p.take(2 * sw * h), p.take(h * sw)};
  weights_.resize(p.used());
  launch_fill_random(ElementType::kFloat16, weights_.data(), static_cast<int64_t>(p.used() / 2), -0.02f, 0.02f, seed, stream);
  for (const auto& o : offsets)
    layers_.push_back({carved<__half>(weights_, o[0]), carved<__half>(weights_, o[1]), carved<__half>(weights_, o[2]),
                       carved<__half>(weights_, o[3]), carved<__half>(weights_, o[4])});
  const int64_t pairs = routing_shape_.pairs(), width = std::max(w, sw);
  BufferCarver r;
  const size_t expert = r.take(pairs, 4), weight = r.take(pairs, 4), slot = r.take(routing_shape_.slots(), 4),
               tile = r.take(routing_shape_.tiles(), 4), used = r.take(1, 4);
  routing_buffer_.resize(r.used());
  routing_ = {carved<int32_t>(routing_buffer_, expert), carved<float>(routing_buffer_, weight), carved<int32_t>(routing_buffer_, slot),
              carved<int32_t>(routing_buffer_, tile), carved<int32_t>(routing_buffer_, used)};
  // The shared expert's rows are the step's rows, fewer than the pairs.
  BufferCarver a;
  const size_t scores = a.take(s_.rows * router_width(e)), gate_up = a.take(pairs * 2 * width), act = a.take(pairs * width), down = a.take(pairs * h);
  activations_.resize(a.used());
  launch_fill(ElementType::kFloat16, activations_.data(), static_cast<int64_t>(a.used() / 2), 0.f, stream);
  scores_ = carved<__half>(activations_, scores);
  gate_up_ = carved<__half>(activations_, gate_up);
  act_ = carved<__half>(activations_, act);
  down_ = carved<__half>(activations_, down);
}

void ExpertMlp::autotune(const __half* normed, __half* residual, cudaStream_t stream) {
  std::vector<const __half*> router, shared_gate_up, shared_down;
  for (const LayerWeights& l : layers_) {
    router.push_back(l.router);
    shared_gate_up.push_back(l.shared_gate_up);
    shared_down.push_back(l.shared_down);
  }
  router_gemm_->autotune(normed, router, scores_, stream);
  if (!shared_gate_up_gemm_) return;
  shared_gate_up_gemm_->autotune(normed, shared_gate_up, gate_up_, stream);
  shared_down_gemm_->autotune(act_, shared_down, residual, stream);
}

void ExpertMlp::enqueue(int layer, const __half* normed, __half* residual, const Mark& mark, cudaStream_t stream) const {
  using namespace step_role;
  const LayerWeights& l = layers_[layer];
  router_gemm_->enqueue(normed, l.router, scores_, stream);
  mark(kRouter);
  launch_top_k_routing(scores_, router_width(s_.experts), routing_shape_, routing_, stream);
  launch_expert_sort(routing_shape_, routing_, stream);
  mark(kRouting);
  ExpertGemmArgs up{normed, l.gate_up, gate_up_, 2 * s_.width, s_.hidden, static_cast<int>(s_.top_k), routing_shape_, routing_};
  launch_expert_gemm(up, stream);
  mark(kExpertGateUp);
  launch_silu_mul(gate_up_, act_, static_cast<int>(routing_shape_.pairs()), static_cast<int>(s_.width), stream);
  mark(kExpertActivation);
  launch_expert_gemm({act_, l.down, down_, s_.hidden, s_.width, 1, routing_shape_, routing_}, stream);
  mark(kExpertDown);
  launch_expert_combine({down_, residual, s_.hidden, s_.add_residual, routing_shape_, routing_}, stream);
  mark(kExpertCombine);
  if (!shared_gate_up_gemm_) return;
  shared_gate_up_gemm_->enqueue(normed, l.shared_gate_up, gate_up_, stream);
  mark(kSharedGateUp);
  launch_silu_mul(gate_up_, act_, static_cast<int>(s_.rows), static_cast<int>(s_.shared_width), stream);
  mark(kSharedActivation);
  shared_down_gemm_->enqueue(act_, l.shared_down, residual, stream);
  mark(kSharedDown);
}

std::string ExpertMlp::description() const {
  std::string out = fmt::format("{} experts, top {}: grouped products in tiles of {} rows; router {}", s_.experts, s_.top_k,
                                routing_shape_.tile_rows, router_gemm_->description());
  if (shared_gate_up_gemm_)
    out += fmt::format("; shared expert {}; {}", shared_gate_up_gemm_->description(), shared_down_gemm_->description());
  return out;
}

}  // namespace modelcost::cuda
