// Multi-head latent attention's small kernels against host references (GPU only): the latent
// normed and appended with its rotated key, the queries rotated (as flash attention reads them, or
// into the absorbed queries), a prefill's keys and values expanded from the up-projected latent.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "measure/cuda_entry.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "llm/latent_kernels.h"
#include "measure/cuda/llm/half_array.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

constexpr int kHeads = 3, kLatent = 512, kRope = 64, kNope = 128, kQk = kNope + kRope, kRow = kLatent + kRope;

// Rotate-half of `rope` values at `position` (base 10000), as the kernels rotate.
void rotate(const float* in, float* out, int64_t position) {
  for (int i = 0; i < kRope / 2; ++i) {
    const double angle = position * std::pow(10000.0, -2.0 * i / kRope);
    out[i] = float(in[i] * std::cos(angle) - in[i + kRope / 2] * std::sin(angle));
    out[i + kRope / 2] = float(in[i + kRope / 2] * std::cos(angle) + in[i] * std::sin(angle));
  }
}

cuda::LatentAppendArgs append_args(const HalfArray& q, const HalfArray& kv, const HalfArray& gamma, HalfArray& cache, HalfArray& q_out) {
  cuda::LatentAppendArgs a;
  a.w = {kHeads, kLatent, kRope, kNope, 128};
  a.q = q.device;
  a.q_ld = kHeads * kQk;
  a.kv = kv.device;
  a.kv_ld = kRow;
  a.kv_gamma = gamma.device;
  a.cache = cache.device;
  a.q_out = q_out.device;
  return a;
}

// Two sequences of 5 new tokens after 7 cached positions: the cache rows and the head-major queries.
TEST(LatentKernels, PrefillAppendMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  const int batch = 2, tokens = 5, past = 7, cache_len = past + tokens, rows = batch * tokens;
  HalfArray q(rows * kHeads * kQk, &rng), kv(rows * kRow, &rng, 2.f), gamma(kLatent, &rng), cache(batch * cache_len * kRow),
      q_out(batch * kHeads * tokens * kQk);
  cuda::LatentAppendArgs a = append_args(q, kv, gamma, cache, q_out);
  a.batch = batch;
  a.tokens = tokens;
  a.position = past;
  a.cache_len = cache_len;
  cuda::launch_latent_append(a, nullptr);
  std::vector<float> want_cache(cache.host.size(), 0.f), want_q(q_out.host.size());
  for (int r = 0; r < rows; ++r) {
    const int seq = r / tokens, token = r % tokens;
    const float* x = &kv.host[r * kRow];
    double ss = 0;
    for (int i = 0; i < kLatent; ++i) ss += double(x[i]) * x[i];
    const double scale = 1 / std::sqrt(ss / kLatent + 1e-6);
    float* row = &want_cache[(seq * cache_len + past + token) * kRow];
    for (int i = 0; i < kLatent; ++i) row[i] = float(x[i] * scale * gamma.host[i]);
    rotate(x + kLatent, row + kLatent, past + token);
    for (int h = 0; h < kHeads; ++h) {
      const float* in = &q.host[(r * kHeads + h) * kQk];
      float* out = &want_q[((seq * kHeads + h) * tokens + token) * kQk];
      for (int i = 0; i < kNope; ++i) out[i] = in[i];
      rotate(in + kNope, out + kNope, past + token);
    }
  }
  EXPECT_LT(relative_error(cache.read(), want_cache), 2e-3);
  EXPECT_LT(relative_error(q_out.read(), want_q), 2e-3);
}

// A decode's rotary parts land in the absorbed queries after the latent columns; the rest stays.
TEST(LatentKernels, DecodeAppendRotatesIntoTheAbsorbedQueries) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(4);
  const int batch = 2, context = 9;
  HalfArray q(batch * kHeads * kQk, &rng), kv(batch * kRow, &rng), gamma(kLatent, &rng), cache(batch * context * kRow),
      q_out(batch * kHeads * kRow);
  cuda::LatentAppendArgs a = append_args(q, kv, gamma, cache, q_out);
  a.absorbed = true;
  a.batch = batch;
  a.position = context - 1;
  a.cache_len = context;
  cuda::launch_latent_append(a, nullptr);
  std::vector<float> want(q_out.host.size(), 0.f);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < kHeads; ++h) rotate(&q.host[(b * kHeads + h) * kQk + kNope], &want[(b * kHeads + h) * kRow + kLatent], context - 1);
  EXPECT_LT(relative_error(q_out.read(), want), 2e-3);
}

TEST(LatentKernels, ExpandLaysOutKeysAndValuesPerHead) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  const int batch = 2, keys = 6, value = 128, up_width = kHeads * (kNope + value);
  HalfArray up(batch * keys * up_width, &rng), cache(batch * keys * kRow, &rng), k(batch * kHeads * keys * kQk),
      v(batch * kHeads * keys * value);
  cuda::launch_latent_expand({{kHeads, kLatent, kRope, kNope, value}, up.device, cache.device, k.device, v.device, batch, keys}, nullptr);
  std::vector<float> want_k(k.host.size()), want_v(v.host.size());
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < keys; ++j)
      for (int h = 0; h < kHeads; ++h) {
        const float* u = &up.host[(b * keys + j) * up_width + h * (kNope + value)];
        const int64_t head_row = (b * kHeads + h) * keys + j;
        for (int i = 0; i < kNope; ++i) want_k[head_row * kQk + i] = u[i];
        for (int i = 0; i < kRope; ++i) want_k[head_row * kQk + kNope + i] = cache.host[(b * keys + j) * kRow + kLatent + i];
        for (int i = 0; i < value; ++i) want_v[head_row * value + i] = u[kNope + i];
      }
  EXPECT_EQ(relative_error(k.read(), want_k), 0);
  EXPECT_EQ(relative_error(v.read(), want_v), 0);
}

}  // namespace
}  // namespace modelcost::testing
#endif
