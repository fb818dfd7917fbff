// LatentAttention (latent_attention.h). Weights are stored [out, in] as linear layers store them;
// the decode's per-head products have their own copies of the up-projection, laid out per head
// (what vLLM precomputes), so each product reads one contiguous weight per head.
#include "llm/latent_attention.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "core/buffer_carver.h"
#include "core/cuda_check.h"
#include "core/device_info.h"
#include "core/kernels.h"
#include "llm/step_kernels.h"
#include "measure/step_roles.h"
#include "modelcost/errors.h"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {

void check_latent_shape(const LatentAttentionShape& s) {
  auto fail = [](const std::string& why) { throw Error(kExitRuntime, "the deployed step cannot run: " + why); };
  const LatentWidths& w = s.w;
  if (w.heads < 1 || s.layers < 1 || s.hidden < 1 || s.q_lora < 0) fail("a latent attention width is not positive");
  if (w.latent != 512 || w.rope != 64)
    fail(fmt::format("a latent of {} and a rotary key of {} (the decode kernel takes DeepSeek's 512 and 64)", w.latent, w.rope));
  if (w.nope % 8 || w.value % 8 || w.qk() > 192 || w.value > w.qk())
    fail(fmt::format("query/key width {} and value width {} (flash attention takes multiples of 8 up to 192, values no wider)",
                     w.qk(), w.value));
  if (s.q_lora % 8) fail(fmt::format("a query rank of {} (a multiple of 8 runs)", s.q_lora));
}

LatentAttention::LatentAttention(const LatentAttentionShape& shape, cublasLtHandle_t lt, GemmWorkspace workspace, int seed,
                                 cudaStream_t stream)
    : s_(shape) {
  check_latent_shape(s_);
  decoding_ = {static_cast<int>(s_.decodes), s_.w.heads, s_.w.latent, s_.w.rope, s_.context, s_.context};
  if (s_.decodes > 0) split_ = plan_latent_decoding(decoding_, current_device_multiprocessors());
  allocate(seed, stream);
  make_gemms(lt, workspace);
}

void LatentAttention::allocate(int seed, cudaStream_t stream) {
  const LatentWidths& w = s_.w;
  const int64_t h = s_.hidden, heads = w.heads, up = heads * (w.nope + w.value);
  BufferCarver c;
  std::vector<std::array<size_t, 7>> offsets(static_cast<size_t>(s_.layers));
  for (auto& o : offsets)
    o = {c.take(s_.first_width() * h), c.take(s_.q_lora),       c.take(heads * w.qk() * s_.q_lora), c.take(w.latent),
         c.take(up * w.latent),       c.take(heads * w.latent * w.nope), c.take(heads * w.value * w.latent)};
  weights_.resize(c.used());
  // Small uniform weights keep the activations finite over many replays; norms scale by one.
  launch_fill_random(ElementType::kFloat16, weights_.data(), static_cast<int64_t>(c.used() / 2), -0.02f, 0.02f, seed, stream);
  for (const auto& o : offsets) {
    launch_fill(ElementType::kFloat16, carved(weights_, o[1]), s_.q_lora, 1.f, stream);
    launch_fill(ElementType::kFloat16, carved(weights_, o[3]), w.latent, 1.f, stream);
    layers_.push_back({carved(weights_, o[0]), carved(weights_, o[1]), carved(weights_, o[2]), carved(weights_, o[3]),
                       carved(weights_, o[4]), carved(weights_, o[5]), carved(weights_, o[6])});
  }
  // The caches: [layer][sequences, positions, latent + rope] of random data.
  for (auto [buffer, positions] : {std::pair{&cache_, s_.decodes * s_.context}, std::pair{&prefill_cache_, s_.prefills * s_.keys()}}) {
    const int64_t elements = s_.layers * positions * w.cache_row();
    if (elements == 0) continue;
    buffer->resize(static_cast<size_t>(elements) * 2);
    launch_fill_random(ElementType::kFloat16, buffer->data(), elements, -1.f, 1.f, seed + 7, stream);
  }
  const int64_t rows = s_.rows(), keys = s_.prefills * s_.keys();
  BufferCarver a;
  const size_t offs[] = {a.take(rows * s_.first_width()),        a.take(rows * s_.q_lora),
                         a.take(s_.q_lora > 0 ? rows * heads * w.qk() : 0), a.take(s_.prefill_rows() * heads * w.qk()),
                         a.take(s_.decodes * heads * w.cache_row()), a.take(s_.decodes * heads * w.latent),
                         a.take(keys * up),                       a.take(keys * heads * w.qk()),
                         a.take(keys * heads * w.value)};
  activations_.resize(a.used());
  launch_fill(ElementType::kFloat16, activations_.data(), static_cast<int64_t>(a.used() / 2), 0.f, stream);
  __half** buffers[] = {&b_.first, &b_.q_normed, &b_.q, &b_.q_heads, &b_.q_latent, &b_.o_latent, &b_.up, &b_.k, &b_.v};
  for (size_t i = 0; i < 9; ++i) *buffers[i] = carved(activations_, offs[i]);
  if (s_.decodes > 0) decoding_workspace_.resize(latent_decoding_workspace_floats(decoding_, split_) * sizeof(float));
}

void LatentAttention::make_gemms(cublasLtHandle_t lt, GemmWorkspace ws) {
  const LatentWidths& w = s_.w;
  const int64_t heads = w.heads;
  first_gemm_ = std::make_unique<StepGemm>(lt, StepGemmShape{s_.rows(), s_.first_width(), s_.hidden}, ws);
  if (s_.q_lora > 0) q_up_gemm_ = std::make_unique<StepGemm>(lt, StepGemmShape{s_.rows(), heads * w.qk(), s_.q_lora}, ws);
  if (s_.prefills > 0) {
    StepGemmShape up{s_.prefills * s_.keys(), heads * (w.nope + w.value), w.latent};
    up.x_ld = w.cache_row();  // the latents of the cache's rows
    kv_up_gemm_ = std::make_unique<StepGemm>(lt, up, ws);
  }
  if (s_.decodes == 0) return;
  StepGemmShape absorb{s_.decodes, w.latent, w.nope};
  absorb.x_ld = queries_ld();
  absorb.y_ld = heads * w.cache_row();
  absorb.batch = heads;
  absorb.x_batch_stride = w.qk();
  absorb.y_batch_stride = w.cache_row();
  absorb_gemm_ = std::make_unique<StepGemm>(lt, absorb, ws);
  StepGemmShape value{s_.decodes, w.value, w.latent};
  value.x_ld = heads * w.latent;
  value.y_ld = heads * w.value;
  value.batch = heads;
  value.x_batch_stride = w.latent;
  value.y_batch_stride = w.value;
  value_gemm_ = std::make_unique<StepGemm>(lt, value, ws);
}

const __half* LatentAttention::queries() const { return s_.q_lora > 0 ? b_.q : b_.first; }
int64_t LatentAttention::queries_ld() const { return s_.q_lora > 0 ? int64_t(s_.w.heads) * s_.w.qk() : s_.first_width(); }

__half* LatentAttention::cache(int layer, bool prefill) const {
  const int64_t positions = prefill ? s_.prefills * s_.keys() : s_.decodes * s_.context;
  return reinterpret_cast<__half*>((prefill ? prefill_cache_ : cache_).data()) + layer * positions * s_.w.cache_row();
}

void LatentAttention::autotune(const __half* normed, __half* out, cudaStream_t stream) {
  auto all = [&](const __half* LayerWeights::*field) {
    std::vector<const __half*> out;
    for (const LayerWeights& l : layers_) out.push_back(l.*field);
    return out;
  };
  first_gemm_->autotune(normed, all(&LayerWeights::first), b_.first, stream);
  if (q_up_gemm_) q_up_gemm_->autotune(b_.q_normed, all(&LayerWeights::q_up), b_.q, stream);
  if (kv_up_gemm_) kv_up_gemm_->autotune(cache(0, true), all(&LayerWeights::kv_up), b_.up, stream);
  if (absorb_gemm_) absorb_gemm_->autotune(queries() + s_.prefill_rows() * queries_ld(), all(&LayerWeights::absorb_q), b_.q_latent, stream);
  if (value_gemm_) value_gemm_->autotune(b_.o_latent, all(&LayerWeights::absorb_v), out + s_.prefill_rows() * s_.w.heads * s_.w.value, stream);
}

void LatentAttention::enqueue(int layer, const __half* normed, __half* out, const Mark& mark, cudaStream_t stream) const {
  using namespace step_role;
  const LayerWeights& l = layers_[static_cast<size_t>(layer)];
  const int rows = static_cast<int>(s_.rows());
  first_gemm_->enqueue(normed, l.first, b_.first, stream);
  mark(kQkv);
  if (q_up_gemm_) {
    RmsNormArgs norm{b_.first, l.q_norm, b_.q_normed, rows, static_cast<int>(s_.q_lora), 1e-6f};
    norm.x_ld = s_.first_width();
    launch_rms_norm(norm, stream);
    mark(kNorm);
    q_up_gemm_->enqueue(b_.q_normed, l.q_up, b_.q, stream);
    mark(kQueryUp);
  }
  // The latent and its rotary key are the first product's last columns.
  LatentAppendArgs append;
  append.w = s_.w;
  append.q_ld = queries_ld();
  append.kv_ld = s_.first_width();
  append.kv_gamma = l.kv_norm;
  const __half* kv = b_.first + (s_.first_width() - s_.w.cache_row());
  if (s_.prefills > 0) {
    LatentAppendArgs p = append;
    p.q = queries();
    p.kv = kv;
    p.cache = cache(layer, true);
    p.q_out = b_.q_heads;
    p.batch = static_cast<int>(s_.prefills);
    p.tokens = static_cast<int>(s_.chunk);
    p.position = s_.past;
    p.cache_len = s_.keys();
    launch_latent_append(p, stream);
  }
  if (s_.decodes > 0) {
    LatentAppendArgs d = append;
    d.q = queries() + s_.prefill_rows() * queries_ld();
    d.kv = kv + s_.prefill_rows() * s_.first_width();
    d.cache = cache(layer, false);
    d.q_out = b_.q_latent;
    d.absorbed = true;
    d.batch = static_cast<int>(s_.decodes);
    d.position = s_.context - 1;
    d.cache_len = s_.context;
    launch_latent_append(d, stream);
  }
  mark(kRotary);
  if (s_.prefills > 0) enqueue_prefill(layer, out, mark, stream);
  if (s_.decodes > 0) enqueue_decode(layer, out + s_.prefill_rows() * s_.w.heads * s_.w.value, mark, stream);
}

// The chunks' keys and values from their cached latents, then causal flash attention (the values
// padded to the keys' width inside the kernel), its output token-major as the output product reads it.
void LatentAttention::enqueue_prefill(int layer, __half* out, const Mark& mark, cudaStream_t stream) const {
  using namespace step_role;
  const LatentWidths& w = s_.w;
  kv_up_gemm_->enqueue(cache(layer, true), layers_[static_cast<size_t>(layer)].kv_up, b_.up, stream);
  mark(kLatentUp);
  launch_latent_expand({w, b_.up, cache(layer, true), b_.k, b_.v, static_cast<int>(s_.prefills), s_.keys()}, stream);
  mark(kKvExpand);
  AttentionShape sh = causal_prefill_shape(s_.prefills, w.heads, w.heads, w.qk(), s_.chunk, s_.past);
  sh.dv = w.value;
  launch_flash_attention(sh, b_.q_heads, b_.k, b_.v, out, stream);
  mark(kPrefillAttention);
}

void LatentAttention::enqueue_decode(int layer, __half* out, const Mark& mark, cudaStream_t stream) const {
  using namespace step_role;
  const LayerWeights& l = layers_[static_cast<size_t>(layer)];
  absorb_gemm_->enqueue(queries() + s_.prefill_rows() * queries_ld(), l.absorb_q, b_.q_latent, stream);
  mark(kQueryAbsorb);
  const float scale = 1.f / std::sqrt(static_cast<float>(s_.w.qk()));
  launch_latent_decoding(decoding_, split_,
                         {b_.q_latent, cache(layer, false), static_cast<float*>(decoding_workspace_.data()), b_.o_latent, scale},
                         stream);
  mark(kAttention);
  value_gemm_->enqueue(b_.o_latent, l.absorb_v, out, stream);
  mark(kValueUp);
}

std::string LatentAttention::description() const {
  std::string text = fmt::format("latent attention: {}", first_gemm_->description());
  for (const auto* g : {&q_up_gemm_, &kv_up_gemm_, &absorb_gemm_, &value_gemm_})
    if (*g) text += "; " + (*g)->description();
  if (s_.decodes > 0) text += fmt::format("; latent decoding {} chunks of {} positions", split_.splits, split_.chunk);
  return text;
}

}  // namespace modelcost::cuda
