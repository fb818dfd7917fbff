// Multi-head latent attention in the deployed step (DeepSeek-V2/V3), as the CUDA module runs it
// and vLLM serves it: the queries and the latent from one product (the queries through a rank-
// q_lora_rank pair where the model has one); the latent normed, the rotary parts rotated and the
// latent appended to the cache. A prefill up-projects its sequences' cached latents to keys and
// values and runs causal flash attention with 192-wide queries and keys and 128-wide values; a decode takes its queries into the latent (the key
// up-projection absorbed), attends over the latent cache every head shares, and takes its outputs
// out of it (the value up-projection absorbed).
#include <algorithm>
#include <cmath>
#include <limits>

#include "llm/step_pricer.h"

namespace modelcost {
namespace {

struct LatentWidths {
  double r = 0, rope = 0, nope = 0, v = 0, qk = 0, ql = 0, heads = 0;
};

LatentWidths latent_widths(const StepSetup& s) {
  const LatentAttention& a = s.model->latent;
  return {static_cast<double>(a.kv_lora_rank), static_cast<double>(a.rope_head_dim), static_cast<double>(a.nope_head_dim),
          static_cast<double>(a.v_head_dim),   static_cast<double>(a.nope_head_dim + a.rope_head_dim),
          static_cast<double>(a.q_lora_rank),  s.heads_per_device};
}

// The prefill chunks: their cached latents up-projected, laid out as keys and values, attended.
void price_latent_prefill(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, StepPricer& price) {
  const LatentWidths l = latent_widths(s);
  const double rows = mix.prefill_tokens * share, keys = mix.prefill_keys * share, a = x.a;
  const double up = l.heads * (l.nope + l.v);
  price.product("latent up product", {keys, l.r, up}, l.r * up * x.w + keys * (l.r + up) * a);
  price.rowwise("K/V expansion", keys * (up + l.rope) * a + keys * l.heads * (l.qk + l.v) * a);
  // Values of up to 128 run at 128 (the kernel's value width past 128-wide keys), wider ones at the keys'.
  const double values = l.v <= 128 ? 128 : l.qk;
  const double flops = 2 * l.heads * (l.qk + values) * mix.prefill_pairs * share;
  const double bytes = rows * l.heads * (l.qk + l.v) * a + keys * l.heads * (l.qk + l.v) * s.kv_bytes;
  price.prefill_attention(flops, bytes, mix.longest_keys);
}

// The decodes: queries into the latent, attention over the shared latent cache (each tile of 16
// heads streams it, latent_decoding_plan.h), outputs out of the latent.
void price_latent_decode(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, StepPricer& price) {
  const LatentWidths l = latent_widths(s);
  const double b = std::ceil(mix.decodes * share), a = x.a, ctx = cached_positions(*s.model, mix.decode_positions / mix.decodes);
  price.product("query absorb product", {b, l.nope, l.r, l.heads}, l.heads * l.nope * l.r * x.w + b * l.heads * (l.nope + l.r) * a);
  const int64_t positions = plan_positions(ctx);
  const LatentDecodingShape shape{plan_count(b), plan_count(l.heads), plan_count(l.r), plan_count(l.rope), positions, positions};
  LatentDecodingWork work = latent_decoding_work(shape, static_cast<int>(s.device->compute_units));
  if (s.kv_bytes != 2) {  // the work counts an fp16 cache, which dominates the bytes: another precision's in proportion
    work.block_bytes *= s.kv_bytes / 2;
    work.bytes *= s.kv_bytes / 2;
  }
  price.latent_attention(work);
  price.product("value up product", {b, l.r, l.v, l.heads}, l.heads * l.r * l.v * x.w + b * l.heads * (l.r + l.v) * a);
}

}  // namespace

double latent_first_product_width(const StepSetup& s) {
  const LatentWidths l = latent_widths(s);
  return (l.ql > 0 ? l.ql : l.heads * l.qk) + l.r + l.rope;
}

void price_latent_attention(const StepSetup& s, const StepMix& mix, double share, const StepWork& x, StepPricer& price) {
  const LatentWidths l = latent_widths(s);
  const double b = x.rows, a = x.a, h = x.h;
  price.product("QKV product", {b, h, x.qkv}, h * x.qkv * x.w + b * (h + x.qkv) * a);
  if (l.ql > 0) {
    price.norm(2 * b * l.ql * a + l.ql * a);
    price.product("query up product", {b, l.ql, l.heads * l.qk}, l.ql * l.heads * l.qk * x.w + b * (l.ql + l.heads * l.qk) * a);
  }
  // The queries and the latent read, the queries written as attention reads them, the cache row
  // appended; the latent is normed on the way (a reduction before its write): the norm's curve.
  const double decodes = std::ceil(mix.decodes * share), prefill_rows = mix.prefill_tokens * share;
  const double append = l.heads * l.qk + l.r + l.rope;
  if (prefill_rows > 0) price.norm(2 * prefill_rows * append * a, "rotary + KV append");
  if (decodes > 0) price.norm(2 * decodes * append * a, "rotary + KV append");
  if (prefill_rows > 0) price_latent_prefill(s, mix, share, x, price);
  if (decodes > 0) price_latent_decode(s, mix, share, x, price);
}

int64_t latent_attention_kernels(const DecoderModel& m, const StepKernelsOf& of) {
  // The first product (and the queries' norm and up product with a low-rank pair); per prefill
  // the append, up product, expansion and attention; per decode the append, the absorbed query
  // product, attention's two kernels and the value product.
  const int64_t first = m.latent.q_lora_rank > 0 ? 3 : 1;
  return first + (of.prefills ? 4 : 0) + (of.decodes ? 5 : 0);
}

}  // namespace modelcost
