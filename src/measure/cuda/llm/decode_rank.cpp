// DecodeRank (decode_rank.h). Weights are stored [out, in] as linear layers store them, one slice
// per layer so no layer's weights are found in L2 from the previous one.
#include "llm/decode_rank.h"

#include <fmt/format.h>

#include <array>

#include "calibrate/nccl_api.h"
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "llm/decode_kernels.h"
#include "measure/decode_roles.h"

namespace modelcost::cuda {
namespace {

constexpr size_t kGemmWorkspaceBytes = size_t(32) << 20;

// Carves one allocation into 256-byte aligned pieces.
class Carver {
 public:
  size_t take(int64_t elements, size_t element_bytes = 2) {
    const size_t at = used_;
    used_ += (static_cast<size_t>(elements) * element_bytes + 255) / 256 * 256;
    return at;
  }
  size_t used() const { return used_; }

 private:
  size_t used_ = 0;
};

__half* at(const DeviceBuffer& buffer, size_t offset) { return reinterpret_cast<__half*>(static_cast<char*>(buffer.data()) + offset); }

}  // namespace

RankShape rank_shape(const DecodeStepSpec& spec) {
  const int64_t tp = spec.tensor_parallel;
  auto fail = [](const std::string& why) { throw Error(kExitRuntime, "the deployed decode step cannot run: " + why); };
  if (spec.layers < 1 || spec.hidden < 2 || spec.heads < 1 || spec.kv_heads < 1 || spec.intermediate < 1 || spec.vocab < 1 ||
      spec.batch < 1 || spec.context < 1 || tp < 1)
    fail("a shape is not positive");
  if (spec.head_dim != 64 && spec.head_dim != 128) fail(fmt::format("head_dim {} (the attention kernel takes 64 or 128)", spec.head_dim));
  if (spec.hidden % 2 || spec.intermediate % (2 * tp)) fail("the hidden and MLP widths must be even per device");
  if (spec.heads % tp || (spec.kv_heads >= tp && spec.kv_heads % tp)) fail(fmt::format("--tp {} does not divide the heads", tp));
  RankShape s;
  s.batch = spec.batch;
  s.hidden = spec.hidden;
  s.heads = spec.heads / tp;
  s.kv_heads = std::max<int64_t>(1, spec.kv_heads / tp);  // replicated when fewer than the devices
  if (s.heads % s.kv_heads) fail("the query heads per device are not a multiple of the kv heads");
  s.head_dim = spec.head_dim;
  s.intermediate = spec.intermediate / tp;
  s.vocab = (spec.vocab + tp - 1) / tp;
  return s;
}

DecodeRank::DecodeRank(const DecodeStepSpec& spec, int rank, ncclComm_t comm, cudaStream_t stream)
    : spec_(spec), s_(rank_shape(spec)), rank_(rank), comm_(comm), stream_(stream) {
  int device = 0, sms = 0;
  MC_CUDA_CHECK(cudaGetDevice(&device));
  MC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  attention_ = {static_cast<int>(s_.batch), static_cast<int>(s_.heads), static_cast<int>(s_.kv_heads),
                static_cast<int>(s_.head_dim), spec.context, spec.context};
  split_ = plan_flash_decoding(attention_, sms);
  if (cublasLtCreate(&lt_) != CUBLAS_STATUS_SUCCESS) throw Error(kExitRuntime, "cublasLtCreate failed");
  allocate();
  make_gemms();
}

DecodeRank::~DecodeRank() {
  if (lt_) cublasLtDestroy(lt_);
}

void DecodeRank::allocate() {
  const int64_t h = s_.hidden, mlp_out = (spec_.gated_mlp ? 2 : 1) * s_.intermediate, attn = s_.heads * s_.head_dim;
  Carver w;
  std::vector<std::array<size_t, 6>> offsets(spec_.layers);
  for (auto& o : offsets)
    o = {w.take(s_.qkv_width() * h), w.take(h * attn), w.take(mlp_out * h), w.take(h * s_.intermediate), w.take(h), w.take(h)};
  const size_t embedding = w.take(spec_.vocab * h), final_norm = w.take(h), lm = w.take(s_.vocab * h);
  weights_.resize(w.used());
  // Small uniform weights keep the activations finite over many replays; norms scale by one.
  launch_fill_random(ElementType::kFloat16, weights_.data(), static_cast<int64_t>(w.used() / 2), -0.02f, 0.02f, 11 + rank_, stream_);
  for (const auto& o : offsets) {
    launch_fill(ElementType::kFloat16, at(weights_, o[4]), h, 1.f, stream_);
    launch_fill(ElementType::kFloat16, at(weights_, o[5]), h, 1.f, stream_);
    layers_.push_back({at(weights_, o[0]), at(weights_, o[1]), at(weights_, o[2]), at(weights_, o[3]), at(weights_, o[4]), at(weights_, o[5])});
  }
  launch_fill(ElementType::kFloat16, at(weights_, final_norm), h, 1.f, stream_);
  embedding_ = at(weights_, embedding);
  final_norm_ = at(weights_, final_norm);
  lm_head_ = at(weights_, lm);
  // The cache: [layer][k|v][batch, kv_heads, context, head_dim] of random data.
  const int64_t cache_elements = 2 * spec_.layers * s_.batch * s_.kv_heads * spec_.context * s_.head_dim;
  cache_.resize(static_cast<size_t>(cache_elements) * 2);
  launch_fill_random(ElementType::kFloat16, cache_.data(), cache_elements, -1.f, 1.f, 101 + rank_, stream_);
  Carver a;
  const size_t offs[] = {a.take(s_.batch * h), a.take(s_.batch * h), a.take(s_.batch * s_.qkv_width()), a.take(s_.batch * attn),
                         a.take(s_.batch * attn), a.take(s_.batch * mlp_out), a.take(s_.batch * s_.intermediate),
                         a.take(s_.batch * s_.vocab), a.take(s_.batch * s_.vocab * spec_.tensor_parallel)};
  activations_.resize(a.used());
  launch_fill(ElementType::kFloat16, activations_.data(), static_cast<int64_t>(a.used() / 2), 0.f, stream_);
  __half** buffers[] = {&residual_, &normed_, &qkv_, &q_, &attn_, &gate_up_, &act_, &logits_, &logits_all_};
  for (size_t i = 0; i < 9; ++i) *buffers[i] = at(activations_, offs[i]);
  attention_workspace_.resize(flash_decoding_workspace_floats(attention_, split_) * sizeof(float));
  workspace_.resize(kGemmWorkspaceBytes);
  ids_.resize(static_cast<size_t>(s_.batch) * sizeof(int32_t));
  std::vector<int32_t> ids(s_.batch);
  for (int64_t b = 0; b < s_.batch; ++b) ids[b] = static_cast<int32_t>((b * 7919) % spec_.vocab);
  MC_CUDA_CHECK(cudaMemcpyAsync(ids_.data(), ids.data(), ids.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
  MC_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DecodeRank::make_gemms() {
  const GemmWorkspace ws{workspace_.data(), workspace_.bytes()};
  // Row-parallel products: rank 0 adds the residual, the others contribute their partial sums.
  const bool residual = rank_ == 0;
  const int64_t b = s_.batch, h = s_.hidden, attn = s_.heads * s_.head_dim;
  qkv_gemm_ = std::make_unique<DecodeGemm>(lt_, DecodeGemmShape{b, s_.qkv_width(), h, false}, ws);
  out_gemm_ = std::make_unique<DecodeGemm>(lt_, DecodeGemmShape{b, h, attn, residual}, ws);
  gate_up_gemm_ = std::make_unique<DecodeGemm>(lt_, DecodeGemmShape{b, (spec_.gated_mlp ? 2 : 1) * s_.intermediate, h, false}, ws);
  down_gemm_ = std::make_unique<DecodeGemm>(lt_, DecodeGemmShape{b, h, s_.intermediate, residual}, ws);
  lm_gemm_ = std::make_unique<DecodeGemm>(lt_, DecodeGemmShape{b, s_.vocab, h, false}, ws);
}

void DecodeRank::autotune() {
  std::vector<const __half*> qkv, out, gate_up, down;
  for (const LayerWeights& l : layers_) {
    qkv.push_back(l.qkv);
    out.push_back(l.out);
    gate_up.push_back(l.gate_up);
    down.push_back(l.down);
  }
  qkv_gemm_->autotune(normed_, qkv, qkv_, stream_);
  out_gemm_->autotune(attn_, out, residual_, stream_);
  gate_up_gemm_->autotune(normed_, gate_up, gate_up_, stream_);
  down_gemm_->autotune(act_, down, residual_, stream_);
  lm_gemm_->autotune(normed_, {lm_head_}, logits_, stream_);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DecodeRank::all_reduce(__half* data, int64_t count) const {
  if (!comm_) return;
  check_nccl(nccl_api()->all_reduce(data, data, static_cast<size_t>(count), ncclFloat16, ncclSum, comm_, stream_), "ncclAllReduce");
  mark(decode_role::kAllReduce);
}

// The kernel nodes the capture gained since the last mark belong to `role`.
void DecodeRank::mark(const char* role) const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  MC_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive || !graph) return;
  const int64_t nodes = count_kernel_nodes(graph);
  roles_.emplace_back(role, static_cast<int>(nodes - captured_nodes_));
  captured_nodes_ = nodes;
}

void DecodeRank::enqueue_layer(int layer) const {
  const LayerWeights& w = layers_[layer];
  const int rows = static_cast<int>(s_.batch), h = static_cast<int>(s_.hidden);
  using namespace decode_role;
  launch_rms_norm({residual_, w.norm1, normed_, rows, h}, stream_);
  mark(kNorm);
  qkv_gemm_->enqueue(normed_, w.qkv, qkv_, stream_);
  mark(kQkv);
  const int64_t cache_one = s_.batch * s_.kv_heads * spec_.context * s_.head_dim;
  __half* k_cache = reinterpret_cast<__half*>(cache_.data()) + 2 * layer * cache_one;
  RotaryAppendArgs rope;
  rope.qkv = qkv_;
  rope.q = q_;
  rope.k_cache = k_cache;
  rope.v_cache = k_cache + cache_one;
  rope.batch = rows;
  rope.heads = static_cast<int>(s_.heads);
  rope.kv_heads = static_cast<int>(s_.kv_heads);
  rope.head_dim = static_cast<int>(s_.head_dim);
  rope.position = spec_.context - 1;
  rope.cache_len = spec_.context;
  launch_rotary_append(rope, stream_);
  mark(kRotary);
  launch_flash_decoding(attention_, split_, {q_, k_cache, k_cache + cache_one, static_cast<float*>(attention_workspace_.data()), attn_},
                        stream_);
  mark(kAttention);
  out_gemm_->enqueue(attn_, w.out, residual_, stream_);
  mark(kOutput);
  all_reduce(residual_, s_.batch * s_.hidden);
  launch_rms_norm({residual_, w.norm2, normed_, rows, h}, stream_);
  mark(kNorm);
  gate_up_gemm_->enqueue(normed_, w.gate_up, gate_up_, stream_);
  mark(kGateUp);
  if (spec_.gated_mlp) launch_silu_mul(gate_up_, act_, rows, static_cast<int>(s_.intermediate), stream_);
  else launch_gelu(gate_up_, s_.batch * s_.intermediate, stream_);
  mark(kActivation);
  down_gemm_->enqueue(spec_.gated_mlp ? act_ : gate_up_, w.down, residual_, stream_);
  mark(kDown);
  all_reduce(residual_, s_.batch * s_.hidden);
}

void DecodeRank::enqueue() const {
  using namespace decode_role;
  roles_.clear();
  captured_nodes_ = 0;
  const int rows = static_cast<int>(s_.batch), h = static_cast<int>(s_.hidden);
  launch_embedding(static_cast<const int32_t*>(ids_.data()), embedding_, residual_, rows, h, stream_);
  mark(kEmbedding);
  for (int layer = 0; layer < spec_.layers; ++layer) enqueue_layer(layer);
  launch_rms_norm({residual_, final_norm_, normed_, rows, h}, stream_);
  mark(kNorm);
  lm_gemm_->enqueue(normed_, lm_head_, logits_, stream_);
  mark(kLmHead);
  if (comm_) {
    check_nccl(nccl_api()->all_gather(logits_, logits_all_, static_cast<size_t>(s_.batch * s_.vocab), ncclFloat16, comm_, stream_),
               "ncclAllGather");
    mark(kGather);
  }
}

std::string DecodeRank::description() const {
  return fmt::format("flash-decoding {} chunks of {} positions; {}; {}; {}; {}; {}", split_.splits, split_.chunk,
                     qkv_gemm_->description(), out_gemm_->description(), gate_up_gemm_->description(),
                     down_gemm_->description(), lm_gemm_->description());
}

}  // namespace modelcost::cuda
