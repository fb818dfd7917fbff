// StepRank (step_rank.h). Weights are stored [out, in] as linear layers store them, one slice
// per layer so no layer's weights are found in L2 from the previous one. The step's rows are the
// prefill chunks' tokens (sequence by sequence) followed by the decodes' one token each.
#include "llm/step_rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "calibrate/nccl_api.h"
#include "core/buffer_carver.h"
#include "core/cuda_check.h"
#include "core/device_info.h"
#include "core/kernels.h"
#include "pointwise/fused_kernels.h"
#include "llm/step_kernels.h"
#include "measure/step_roles.h"

namespace modelcost::cuda {
namespace {

constexpr size_t kGemmWorkspaceBytes = size_t(32) << 20;

}  // namespace

RankShape rank_shape(const ServingStepSpec& spec) {
  const int64_t tp = spec.tensor_parallel;
  auto fail = [](const std::string& why) { throw Error(kExitRuntime, "the deployed step cannot run: " + why); };
  if (spec.layers < 1 || spec.hidden < 2 || spec.heads < 1 || spec.kv_heads < 1 || spec.intermediate < 1 || spec.vocab < 1 ||
      spec.batch < 0 || spec.context < 1 || tp < 1 || spec.prefills < 0 || spec.prefill_past < 0 ||
      (spec.prefills > 0 && spec.prefill_tokens < 1))
    fail("a shape is not positive");
  if (spec.batch + spec.prefills < 1) fail("the step has no sequence");
  if (static_cast<double>(spec.prefills) * static_cast<double>(spec.prefill_tokens) + static_cast<double>(spec.batch) > 1073741824.0)
    fail("more than 2^30 new tokens in one step");
  const bool latent = spec.kv_lora_rank > 0;
  if (!latent && spec.head_dim != 64 && spec.head_dim != 128)
    fail(fmt::format("head_dim {} (the attention kernel takes 64 or 128)", spec.head_dim));
  if (spec.hidden % 2 || spec.intermediate % (2 * tp)) fail("the hidden and MLP widths must be even per device");
  if (spec.experts > 0 && (spec.expert_width % tp || spec.shared_expert_width % tp))
    fail(fmt::format("--tp {} does not divide the experts' widths", tp));
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
  s.prefills = spec.prefills;
  s.prefill_tokens = spec.prefill_tokens;
  s.prefill_past = spec.prefill_past;
  s.latent = latent;
  s.value_width = latent ? spec.v_head_dim : spec.head_dim;
  if (latent) check_latent_shape(s.latent_shape(spec));
  if (spec.experts > 0) {
    s.dense_layers = std::clamp<int64_t>(spec.dense_layers, 0, spec.layers);
    check_expert_shape(s.experts_shape(spec, 0));
  } else {
    s.dense_layers = spec.layers;
  }
  return s;
}

StepRank::StepRank(const ServingStepSpec& spec, int rank, ncclComm_t comm, cudaStream_t stream)
    : spec_(spec), s_(rank_shape(spec)), rank_(rank), comm_(comm), stream_(stream) {
  const int sms = current_device_multiprocessors();
  attention_ = {static_cast<int>(s_.batch), static_cast<int>(s_.heads), static_cast<int>(s_.kv_heads),
                static_cast<int>(s_.head_dim), spec.context, spec.context};
  if (s_.batch > 0 && !s_.latent) split_ = plan_flash_decoding(attention_, sms);
  if (cublasLtCreate(&lt_) != CUBLAS_STATUS_SUCCESS) throw Error(kExitRuntime, "cublasLtCreate failed");
  allocate();
  make_gemms();
  if (s_.latent)
    latent_ = std::make_unique<LatentAttention>(s_.latent_shape(spec), lt_, GemmWorkspace{workspace_.data(), workspace_.bytes()},
                                                41 + rank, stream_);
  if (spec.experts > 0 && s_.dense_layers < spec.layers)
    experts_ = std::make_unique<ExpertMlp>(s_.experts_shape(spec, rank), lt_, GemmWorkspace{workspace_.data(), workspace_.bytes()},
                                           31 + rank, stream_);
}

StepRank::~StepRank() {
  if (lt_) cublasLtDestroy(lt_);
}

void StepRank::allocate() {
  const int64_t h = s_.hidden, mlp_out = (spec_.gated_mlp ? 2 : 1) * s_.intermediate, attn = s_.attention_width();
  BufferCarver w;
  std::vector<std::array<size_t, 6>> offsets(spec_.layers);
  for (size_t layer = 0; layer < offsets.size(); ++layer) {
    const int64_t mlp = static_cast<int64_t>(layer) < s_.dense_layers ? 1 : 0;  // a MoE layer's MLP is the experts'
    offsets[layer] = {w.take(s_.qkv_width() * h), w.take(h * attn), w.take(mlp * mlp_out * h), w.take(mlp * h * s_.intermediate),
                      w.take(h), w.take(h)};
  }
  const size_t embedding = w.take(spec_.vocab * h), final_norm = w.take(h), lm = w.take(s_.vocab * h);
  weights_.resize(w.used());
  // Small uniform weights keep the activations finite over many replays; norms scale by one.
  launch_fill_random(ElementType::kFloat16, weights_.data(), static_cast<int64_t>(w.used() / 2), -0.02f, 0.02f, 11 + rank_, stream_);
  for (const auto& o : offsets) {
    launch_fill(ElementType::kFloat16, carved(weights_, o[4]), h, 1.f, stream_);
    launch_fill(ElementType::kFloat16, carved(weights_, o[5]), h, 1.f, stream_);
    layers_.push_back({carved(weights_, o[0]), carved(weights_, o[1]), carved(weights_, o[2]), carved(weights_, o[3]), carved(weights_, o[4]), carved(weights_, o[5])});
  }
  launch_fill(ElementType::kFloat16, carved(weights_, final_norm), h, 1.f, stream_);
  embedding_ = carved(weights_, embedding);
  final_norm_ = carved(weights_, final_norm);
  lm_head_ = carved(weights_, lm);
  // The caches: [layer][k|v][sequences, kv_heads, positions, head_dim] of random data, the
  // decodes' of `context` positions, the prefill chunks' of their past and chunk.
  if (!s_.latent) {  // MLA keeps its own latent caches
    fill_cache(cache_, s_.batch * spec_.context, 101);
    fill_cache(prefill_cache_, s_.prefills * s_.prefill_cache_len(), 202);
  }
  const int64_t rows = s_.rows(), out_rows = s_.output_rows();
  BufferCarver a;
  const size_t offs[] = {a.take(rows * h),       a.take(rows * h),         a.take(rows * s_.qkv_width()),
                         a.take(rows * attn),    a.take(rows * attn),      a.take(rows * mlp_out),
                         a.take(rows * s_.intermediate), a.take(out_rows * h), a.take(out_rows * s_.vocab),
                         a.take(out_rows * s_.vocab * spec_.tensor_parallel)};
  activations_.resize(a.used());
  launch_fill(ElementType::kFloat16, activations_.data(), static_cast<int64_t>(a.used() / 2), 0.f, stream_);
  __half** buffers[] = {&residual_, &normed_, &qkv_, &q_, &attn_, &gate_up_, &act_, &last_, &logits_, &logits_all_};
  for (size_t i = 0; i < 10; ++i) *buffers[i] = carved(activations_, offs[i]);
  if (s_.batch > 0 && !s_.latent) attention_workspace_.resize(flash_decoding_workspace_floats(attention_, split_) * sizeof(float));
  workspace_.resize(kGemmWorkspaceBytes);
  std::vector<int32_t> ids(rows), last(out_rows);
  for (int64_t r = 0; r < rows; ++r) ids[r] = static_cast<int32_t>((r * 7919) % spec_.vocab);
  // Each sequence's last new position: a prefill chunk's last token, a decode's one token.
  for (int64_t p = 0; p < s_.prefills; ++p) last[p] = static_cast<int32_t>((p + 1) * s_.prefill_tokens - 1);
  for (int64_t b = 0; b < s_.batch; ++b) last[s_.prefills + b] = static_cast<int32_t>(s_.prefill_rows() + b);
  upload(ids_, ids);
  upload(last_ids_, last);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void StepRank::fill_cache(DeviceBuffer& cache, int64_t positions, int seed) {
  const int64_t elements = 2 * spec_.layers * s_.kv_heads * positions * s_.head_dim;
  if (elements == 0) return;
  cache.resize(static_cast<size_t>(elements) * 2);
  launch_fill_random(ElementType::kFloat16, cache.data(), elements, -1.f, 1.f, seed + rank_, stream_);
}

void StepRank::upload(DeviceBuffer& buffer, const std::vector<int32_t>& values) const {
  buffer.resize(values.size() * sizeof(int32_t));
  MC_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(), values.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
}

void StepRank::make_gemms() {
  const GemmWorkspace ws{workspace_.data(), workspace_.bytes()};
  // Row-parallel products: rank 0 adds the residual, the others contribute their partial sums.
  const bool residual = rank_ == 0;
  const int64_t b = s_.rows(), h = s_.hidden, attn = s_.attention_width();
  if (!s_.latent) qkv_gemm_ = std::make_unique<StepGemm>(lt_, StepGemmShape{b, s_.qkv_width(), h, false}, ws);
  out_gemm_ = std::make_unique<StepGemm>(lt_, StepGemmShape{b, h, attn, residual}, ws);
  gate_up_gemm_ = std::make_unique<StepGemm>(lt_, StepGemmShape{b, (spec_.gated_mlp ? 2 : 1) * s_.intermediate, h, false}, ws);
  down_gemm_ = std::make_unique<StepGemm>(lt_, StepGemmShape{b, h, s_.intermediate, residual}, ws);
  lm_gemm_ = std::make_unique<StepGemm>(lt_, StepGemmShape{s_.output_rows(), s_.vocab, h, false}, ws);
}

void StepRank::autotune() {
  std::vector<const __half*> qkv, out, gate_up, down;
  for (const LayerWeights& l : layers_) {
    qkv.push_back(l.qkv);
    out.push_back(l.out);
    gate_up.push_back(l.gate_up);
    down.push_back(l.down);
  }
  if (latent_) latent_->autotune(normed_, attn_, stream_);
  else qkv_gemm_->autotune(normed_, qkv, qkv_, stream_);
  out_gemm_->autotune(attn_, out, residual_, stream_);
  if (s_.dense_layers > 0) {
    gate_up.resize(s_.dense_layers);
    down.resize(s_.dense_layers);
    gate_up_gemm_->autotune(normed_, gate_up, gate_up_, stream_);
    down_gemm_->autotune(act_, down, residual_, stream_);
  }
  if (experts_) experts_->autotune(normed_, residual_, stream_);
  lm_gemm_->autotune(normed_, {lm_head_}, logits_, stream_);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void StepRank::all_reduce(__half* data, int64_t count) const {
  if (!comm_) return;
  check_nccl(nccl_api()->all_reduce(data, data, static_cast<size_t>(count), ncclFloat16, ncclSum, comm_, stream_), "ncclAllReduce");
  mark(step_role::kAllReduce);
}

// The kernel nodes the capture gained since the last mark belong to `role`.
void StepRank::mark(const char* role) const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  MC_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive || !graph) return;
  const int64_t nodes = count_kernel_nodes(graph);
  roles_.emplace_back(role, static_cast<int>(nodes - captured_nodes_));
  captured_nodes_ = nodes;
}

void StepRank::enqueue_layer(int layer) const {
  const LayerWeights& w = layers_[layer];
  const int rows = static_cast<int>(s_.rows()), h = static_cast<int>(s_.hidden);
  using namespace step_role;
  launch_rms_norm({residual_, w.norm1, normed_, rows, h}, stream_);
  mark(kNorm);
  if (latent_) {
    latent_->enqueue(layer, normed_, attn_, [this](const char* role) { mark(role); }, stream_);
  } else {
    qkv_gemm_->enqueue(normed_, w.qkv, qkv_, stream_);
    mark(kQkv);
    enqueue_attention(layer);
  }
  out_gemm_->enqueue(attn_, w.out, residual_, stream_);
  mark(kOutput);
  all_reduce(residual_, s_.rows() * s_.hidden);
  launch_rms_norm({residual_, w.norm2, normed_, rows, h}, stream_);
  mark(kNorm);
  if (layer >= s_.dense_layers) {
    experts_->enqueue(static_cast<int>(layer - s_.dense_layers), normed_, residual_, [this](const char* role) { mark(role); }, stream_);
    all_reduce(residual_, s_.rows() * s_.hidden);
    return;
  }
  gate_up_gemm_->enqueue(normed_, w.gate_up, gate_up_, stream_);
  mark(kGateUp);
  if (spec_.gated_mlp) launch_silu_mul(gate_up_, act_, rows, static_cast<int>(s_.intermediate), stream_);
  else launch_gelu(gate_up_, s_.rows() * s_.intermediate, stream_);
  mark(kActivation);
  down_gemm_->enqueue(spec_.gated_mlp ? act_ : gate_up_, w.down, residual_, stream_);
  mark(kDown);
  all_reduce(residual_, s_.rows() * s_.hidden);
}

// Rotary + cache append for the prefill chunks and the decodes, then their attention: causal
// flash attention of each chunk against its past and itself (O written as the output product's
// rows), flash-decoding for the decodes.
void StepRank::enqueue_attention(int layer) const {
  using namespace step_role;
  const int64_t attn = s_.heads * s_.head_dim, prefill_rows = s_.prefill_rows();
  RotaryAppendArgs rope;
  rope.heads = static_cast<int>(s_.heads);
  rope.kv_heads = static_cast<int>(s_.kv_heads);
  rope.head_dim = static_cast<int>(s_.head_dim);
  const int64_t prefill_one = s_.prefills * s_.kv_heads * s_.prefill_cache_len() * s_.head_dim;
  __half* prefill_k = s_.prefills > 0 ? reinterpret_cast<__half*>(prefill_cache_.data()) + 2 * layer * prefill_one : nullptr;
  const int64_t cache_one = s_.batch * s_.kv_heads * spec_.context * s_.head_dim;
  __half* k_cache = s_.batch > 0 ? reinterpret_cast<__half*>(cache_.data()) + 2 * layer * cache_one : nullptr;
  if (s_.prefills > 0) {
    RotaryAppendArgs p = rope;
    p.qkv = qkv_;
    p.q = q_;
    p.k_cache = prefill_k;
    p.v_cache = prefill_k + prefill_one;
    p.batch = static_cast<int>(s_.prefills);
    p.tokens = static_cast<int>(s_.prefill_tokens);
    p.position = s_.prefill_past;
    p.cache_len = s_.prefill_cache_len();
    launch_rotary_append(p, stream_);
  }
  if (s_.batch > 0) {
    RotaryAppendArgs d = rope;
    d.qkv = qkv_ + prefill_rows * s_.qkv_width();
    d.q = q_ + prefill_rows * attn;
    d.k_cache = k_cache;
    d.v_cache = k_cache + cache_one;
    d.batch = static_cast<int>(s_.batch);
    d.position = spec_.context - 1;
    d.cache_len = spec_.context;
    launch_rotary_append(d, stream_);
  }
  mark(kRotary);
  if (s_.prefills > 0) {
    const AttentionShape sh =
        causal_prefill_shape(s_.prefills, s_.heads, s_.kv_heads, s_.head_dim, s_.prefill_tokens, s_.prefill_past);
    launch_flash_attention(sh, q_, prefill_k, prefill_k + prefill_one, attn_, stream_);
    mark(kPrefillAttention);
  }
  if (s_.batch > 0) {
    launch_flash_decoding(attention_, split_,
                          {q_ + prefill_rows * attn, k_cache, k_cache + cache_one,
                           static_cast<float*>(attention_workspace_.data()), attn_ + prefill_rows * attn},
                          stream_);
    mark(kAttention);
  }
}

// The rows the LM head reads: each sequence's last new position. A decode step's rows are those
// already; a step with prefill chunks gathers them first.
void StepRank::enqueue_last_positions() const {
  using namespace step_role;
  const int out_rows = static_cast<int>(s_.output_rows()), h = static_cast<int>(s_.hidden);
  const __half* last = residual_;
  if (s_.prefills > 0) {
    launch_embedding(static_cast<const int32_t*>(last_ids_.data()), residual_, last_, out_rows, h, stream_);
    mark(kLastPositions);
    last = last_;
  }
  launch_rms_norm({last, final_norm_, normed_, out_rows, h}, stream_);
  mark(kNorm);
}

void StepRank::enqueue() const {
  using namespace step_role;
  roles_.clear();
  captured_nodes_ = 0;
  const int rows = static_cast<int>(s_.rows()), h = static_cast<int>(s_.hidden);
  launch_embedding(static_cast<const int32_t*>(ids_.data()), embedding_, residual_, rows, h, stream_);
  mark(kEmbedding);
  for (int layer = 0; layer < spec_.layers; ++layer) enqueue_layer(layer);
  enqueue_last_positions();
  lm_gemm_->enqueue(normed_, lm_head_, logits_, stream_);
  mark(kLmHead);
  if (comm_) {
    check_nccl(nccl_api()->all_gather(logits_, logits_all_, static_cast<size_t>(s_.output_rows() * s_.vocab), ncclFloat16,
                                      comm_, stream_),
               "ncclAllGather");
    mark(kGather);
  }
}

void StepRank::enqueue_collectives(const std::string& role) const {
  if (!comm_) return;
  if (role == step_role::kAllReduce) {
    for (int i = 0; i < 2 * spec_.layers; ++i)
      check_nccl(nccl_api()->all_reduce(residual_, residual_, static_cast<size_t>(s_.rows() * s_.hidden), ncclFloat16, ncclSum,
                                        comm_, stream_),
                 "ncclAllReduce");
  } else if (role == step_role::kGather) {
    check_nccl(nccl_api()->all_gather(logits_, logits_all_, static_cast<size_t>(s_.output_rows() * s_.vocab), ncclFloat16, comm_,
                                      stream_),
               "ncclAllGather");
  }
}

std::string StepRank::description() const {
  auto ordinary = [&] {  // the attention kernels, then the QKV product
    return (s_.prefills > 0 ? fmt::format("causal flash attention {} x {} after {}", s_.prefills, s_.prefill_tokens, s_.prefill_past)
                            : "") +
           (s_.prefills > 0 && s_.batch > 0 ? "; " : "") +
           (s_.batch > 0 ? fmt::format("flash-decoding {} chunks of {} positions", split_.splits, split_.chunk) : "") + "; " +
           qkv_gemm_->description();
  };
  const std::string attention = latent_ ? latent_->description() : ordinary();
  const std::string mlp = s_.dense_layers > 0 ? fmt::format("; {}; {}", gate_up_gemm_->description(), down_gemm_->description()) : "";
  return fmt::format("{}; {}{}{}; {}", attention, out_gemm_->description(), mlp, experts_ ? "; " + experts_->description() : "",
                     lm_gemm_->description());
}

}  // namespace modelcost::cuda
