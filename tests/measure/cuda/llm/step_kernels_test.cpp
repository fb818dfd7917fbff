// The deployed step's kernels against host references on small shapes (GPU only): a decode's few
// rows and a prefill's many.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "measure/cuda_entry.h"
#include "modelcost/measure.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm/skinny_gemm.h"
#include "llm/step_gemm.h"
#include "llm/step_kernels.h"
#include "llm/flash_decoding.h"
#include "measure/cuda/llm/half_array.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

TEST(StepKernels, RmsNormMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(1);
  // A decode step's rows, held in registers and wider than they hold; a prefill's rows (a warp
  // each), the last block partial and 1/8 of its lanes past the row's end.
  for (const auto [rows, width] : {std::pair{3, 520}, std::pair{3, 8400}, std::pair{301, 2048}, std::pair{260, 1000}}) {
    HalfArray x(rows * width, &rng, 3.f), gamma(width, &rng), y(rows * width);
    cuda::launch_rms_norm({x.device, gamma.device, y.device, rows, width, 1e-5f}, nullptr);
    std::vector<float> want(rows * width);
    for (int r = 0; r < rows; ++r) {
      double ss = 0;
      for (int i = 0; i < width; ++i) ss += double(x.host[r * width + i]) * x.host[r * width + i];
      const double scale = 1 / std::sqrt(ss / width + 1e-5);
      for (int i = 0; i < width; ++i) want[r * width + i] = float(x.host[r * width + i] * scale * gamma.host[i]);
    }
    EXPECT_LT(relative_error(y.read(), want), 2e-3) << rows << " rows of " << width;
  }
}

TEST(StepKernels, SiluMulMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(2);
  const int rows = 2, width = 96;
  HalfArray gate_up(rows * 2 * width, &rng, 4.f), y(rows * width);
  cuda::launch_silu_mul(gate_up.device, y.device, rows, width, nullptr);
  std::vector<float> want(rows * width);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < width; ++i) {
      const float g = gate_up.host[r * 2 * width + i], u = gate_up.host[r * 2 * width + width + i];
      want[r * width + i] = g / (1 + std::exp(-g)) * u;
    }
  EXPECT_LT(relative_error(y.read(), want), 2e-3);
}

// y = x W^T (+ bias) (+ y) against the host, for batch rows that fill 1..4 tiles of 8 partly or
// wholly, K split unevenly over the block's warps (fewer 32-wide chunks than warps, a remainder
// after the unrolled loop), the residual added, and output widths that leave the last block of
// 16 partly empty (a classifier's 1000).
TEST(StepKernels, SkinnyGemmMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  struct Case {
    int m, n, k;
    bool accumulate, bias;
  };
  for (const Case c : {Case{1, 48, 96, false, false}, Case{5, 32, 2048, true, false}, Case{8, 16, 160, false, false},
                       Case{17, 64, 1376, true, false}, Case{32, 128, 544, true, false}, Case{1, 1000, 2048, false, true},
                       Case{3, 24, 64, true, true}}) {
    HalfArray x(size_t(c.m) * c.k, &rng), w(size_t(c.n) * c.k, &rng, 0.5f), y(size_t(c.m) * c.n, &rng), b(size_t(c.n), &rng);
    std::vector<float> want(y.host.size());
    for (int r = 0; r < c.m; ++r)
      for (int o = 0; o < c.n; ++o) {
        double acc = (c.accumulate ? y.host[size_t(r) * c.n + o] : 0) + (c.bias ? b.host[size_t(o)] : 0);
        for (int i = 0; i < c.k; ++i) acc += double(x.host[size_t(r) * c.k + i]) * w.host[size_t(o) * c.k + i];
        want[size_t(r) * c.n + o] = float(acc);
      }
    cuda::SkinnyGemmArgs a{x.device, w.device, y.device, c.m, c.n, c.k, c.accumulate};
    if (c.bias) a.bias = b.device;
    ASSERT_TRUE(cuda::skinny_gemm_supports(a));
    cuda::launch_skinny_gemm(a, nullptr);
    EXPECT_LT(relative_error(y.read(), want), 2e-3) << c.m << "x" << c.n << "x" << c.k;
  }
  EXPECT_FALSE(cuda::skinny_gemm_supports({nullptr, nullptr, nullptr, 33, 16, 32, false}));
  EXPECT_FALSE(cuda::skinny_gemm_supports({nullptr, nullptr, nullptr, 1, 16, 48, false}));
}

// Multi-head latent attention's per-head products as one batched StepGemm: head h's rows read at
// column h * 24 of 80-wide rows, its weight [16, 8] after the others, its output at column h * 20
// of 64-wide rows (an absorbed query product's strides, small), against the host, after the autotune.
TEST(StepKernels, BatchedStridedStepGemmMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(9);
  const int m = 5, n = 16, k = 8, heads = 3, x_ld = 80, y_ld = 64;
  HalfArray x(size_t(m) * x_ld, &rng), w(size_t(heads) * n * k, &rng), y(size_t(m) * y_ld);
  cuda::StepGemmShape shape{m, n, k};
  shape.x_ld = x_ld;
  shape.y_ld = y_ld;
  shape.batch = heads;
  shape.x_batch_stride = 24;
  shape.y_batch_stride = 20;
  cublasLtHandle_t lt = nullptr;
  ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
  void* workspace = nullptr;
  cudaMalloc(&workspace, 1 << 20);
  cudaStream_t stream = nullptr;  // the autotune captures its candidates: not on the legacy stream
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  {
    cuda::StepGemm gemm(lt, shape, {workspace, 1 << 20});
    gemm.autotune(x.device, {w.device}, y.device, stream);
    EXPECT_FALSE(gemm.uses_skinny_kernel());  // strided rows are cuBLASLt's
    gemm.enqueue(x.device, w.device, y.device, stream);
    cudaStreamSynchronize(stream);
  }
  cudaStreamDestroy(stream);
  const std::vector<float> got = y.read();
  std::vector<float> want(y.host.size(), 0.f);
  for (int h = 0; h < heads; ++h)
    for (int r = 0; r < m; ++r)
      for (int o = 0; o < n; ++o) {
        double acc = 0;
        for (int i = 0; i < k; ++i) acc += double(x.host[size_t(r) * x_ld + h * 24 + i]) * w.host[(size_t(h) * n + o) * k + i];
        want[size_t(r) * y_ld + h * 20 + o] = float(acc);
      }
  EXPECT_LT(relative_error(got, want), 2e-3);  // the columns no head writes stay zero on both sides
  cudaFree(workspace);
  cublasLtDestroy(lt);
}

// `tokens` new positions per sequence (1: a decode step; more: a prefill chunk) after `pos` cached.
void check_rotary_append(int tokens, int d = 64) {
  std::mt19937 rng(3 + tokens);
  const int batch = 2, heads = 4, kv = 2, pos = 7, cache_len = pos + tokens + 2;
  const int width = (heads + 2 * kv) * d, rows = batch * tokens;
  HalfArray qkv(rows * width, &rng), q(rows * heads * d), k(batch * kv * cache_len * d), v(batch * kv * cache_len * d);
  cuda::RotaryAppendArgs a;
  a.qkv = qkv.device;
  a.q = q.device;
  a.k_cache = k.device;
  a.v_cache = v.device;
  a.batch = batch;
  a.heads = heads;
  a.kv_heads = kv;
  a.head_dim = d;
  a.tokens = tokens;
  a.position = pos;
  a.cache_len = cache_len;
  cuda::launch_rotary_append(a, nullptr);
  auto rotate = [&](const float* in, float* out, int position) {
    for (int i = 0; i < d / 2; ++i) {
      const double angle = position * std::pow(10000.0, -2.0 * i / d);
      out[i] = float(in[i] * std::cos(angle) - in[i + d / 2] * std::sin(angle));
      out[i + d / 2] = float(in[i + d / 2] * std::cos(angle) + in[i] * std::sin(angle));
    }
  };
  std::vector<float> want_q(rows * heads * d), want_k(k.host.size(), 0.f), want_v(v.host.size(), 0.f);
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < tokens; ++t) {
      const float* row = qkv.host.data() + (b * tokens + t) * width;
      for (int h = 0; h < heads; ++h) rotate(row + h * d, want_q.data() + ((b * heads + h) * tokens + t) * d, pos + t);
      for (int h = 0; h < kv; ++h) {
        const size_t at = ((size_t(b) * kv + h) * cache_len + pos + t) * d;
        rotate(row + (heads + h) * d, want_k.data() + at, pos + t);
        for (int i = 0; i < d; ++i) want_v[at + i] = row[(heads + kv + h) * d + i];
      }
    }
  EXPECT_LT(relative_error(q.read(), want_q), 2e-3) << tokens << " tokens";
  EXPECT_LT(relative_error(k.read(), want_k), 2e-3) << tokens << " tokens";
  EXPECT_EQ(v.read(), want_v) << tokens << " tokens";
}

TEST(StepKernels, RotaryAppendRotatesQueryAndKeyAndCopiesValue) {
  SKIP_WITHOUT_GPU();
  check_rotary_append(1);
  check_rotary_append(5);        // a prefill chunk: 16-byte pieces of each half
  check_rotary_append(300, 128);
}

// Softmax(q k^T / sqrt(d)) v over `context` cached positions, per query head.
std::vector<float> host_attention(const cuda::FlashDecodingShape& s, const HalfArray& q, const HalfArray& k, const HalfArray& v) {
  std::vector<float> out(size_t(s.batch) * s.heads * s.head_dim);
  const int group = s.heads / s.kv_heads;
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const size_t cache = (size_t(b) * s.kv_heads + h / group) * s.cache_len * s.head_dim;
      std::vector<double> p(s.context);
      double m = -1e300, l = 0;
      for (int j = 0; j < s.context; ++j) {
        double dot = 0;
        for (int i = 0; i < s.head_dim; ++i) dot += q.host[(size_t(b) * s.heads + h) * s.head_dim + i] * k.host[cache + size_t(j) * s.head_dim + i];
        p[j] = dot / std::sqrt(double(s.head_dim));
        m = std::max(m, p[j]);
      }
      for (auto& x : p) l += (x = std::exp(x - m));
      for (int i = 0; i < s.head_dim; ++i) {
        double acc = 0;
        for (int j = 0; j < s.context; ++j) acc += p[j] * v.host[cache + size_t(j) * s.head_dim + i];
        out[(size_t(b) * s.heads + h) * s.head_dim + i] = float(acc / l);
      }
    }
  return out;
}

void check_attention(int batch, int heads, int kv, int d, int context, int sm_count) {
  std::mt19937 rng(batch * 1000 + heads * 10 + context);
  const cuda::FlashDecodingShape s{batch, heads, kv, d, context, context + 3};
  ASSERT_TRUE(cuda::flash_decoding_supports(s));
  const cuda::FlashDecodingSplit split = cuda::plan_flash_decoding(s, sm_count);
  HalfArray q(size_t(batch) * heads * d, &rng, 2.f), k(size_t(batch) * kv * s.cache_len * d, &rng, 2.f),
      v(size_t(batch) * kv * s.cache_len * d, &rng), out(size_t(batch) * heads * d);
  float* workspace = nullptr;
  cudaMalloc(&workspace, cuda::flash_decoding_workspace_floats(s, split) * sizeof(float));
  cuda::prepare_flash_decoding();
  cuda::launch_flash_decoding(s, split, {q.device, k.device, v.device, workspace, out.device}, nullptr);
  EXPECT_LT(relative_error(out.read(), host_attention(s, q, k, v)), 3e-3)
      << "batch " << batch << " heads " << heads << "/" << kv << " d " << d << " context " << context << ": " << split.splits
      << " chunks of " << split.chunk;
  cudaFree(workspace);
}

TEST(StepKernels, FlashDecodingMatchesTheHostForMhaGqaAndMqa) {
  SKIP_WITHOUT_GPU();
  check_attention(1, 4, 4, 64, 1, 132);       // MHA, one position
  check_attention(2, 8, 2, 64, 300, 132);     // GQA, many chunks, a partial last chunk
  check_attention(3, 32, 4, 64, 1000, 2);     // TinyLlama's group of 8, few long chunks
  check_attention(1, 16, 1, 128, 777, 132);   // MQA, head_dim 128
  check_attention(2, 12, 12, 128, 2049, 1);   // one block per head: the largest chunks
}

// The residency the prediction assumes (flash_decoding_resident_blocks) is the kernel's.
TEST(StepKernels, FlashDecodingResidencyIsWhatThePlanDeclares) {
  SKIP_WITHOUT_GPU();
  cuda::prepare_flash_decoding();
  for (const int d : {64, 128})
    for (const auto [heads, kv] : {std::pair{32, 8}, std::pair{16, 4}, std::pair{14, 2}, std::pair{16, 16}}) {
      const cuda::FlashDecodingShape s{32, heads, kv, d, 1024, 1024};
      EXPECT_EQ(cuda::flash_decoding_blocks_per_sm(s, cuda::plan_flash_decoding(s, 132)), flash_decoding_resident_blocks(d))
          << "head_dim " << d << ", " << heads << "/" << kv << " heads";
    }
}

}  // namespace
}  // namespace modelcost::testing
#endif
