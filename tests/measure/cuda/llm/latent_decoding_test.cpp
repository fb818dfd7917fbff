// MLA decode attention in its absorbed form (latent_decoding.cu) against a host reference (GPU
// only): one cache row of latent 512 + rotary 64 per position, shared by every query head.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "measure/cuda_entry.h"
#include "modelcost/errors.h"
#include "modelcost/measure.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "llm/latent_decoding.h"
#include "measure/cuda/llm/half_array.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

constexpr int kWidth = 576, kLatent = 512;
const float kScale = 1.f / std::sqrt(192.f);  // DeepSeek's: the query-key head size 128 + 64

// Softmax(scale q c^T) over the first `context` cache rows, times their first 512 columns, per head.
std::vector<float> host_latent_attention(const cuda::LatentDecodingShape& s, const HalfArray& q, const HalfArray& cache) {
  std::vector<float> out(size_t(s.batch) * s.heads * kLatent);
  std::vector<double> p(s.context);
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const float* qh = q.host.data() + (size_t(b) * s.heads + h) * kWidth;
      const float* rows = cache.host.data() + size_t(b) * s.cache_len * kWidth;
      double m = -1e300, l = 0;
      for (int j = 0; j < s.context; ++j) {
        double dot = 0;
        for (int i = 0; i < kWidth; ++i) dot += double(qh[i]) * rows[size_t(j) * kWidth + i];
        p[j] = dot * kScale;
        m = std::max(m, p[j]);
      }
      for (auto& x : p) l += (x = std::exp(x - m));
      for (int i = 0; i < kLatent; ++i) {
        double acc = 0;
        for (int j = 0; j < s.context; ++j) acc += p[j] * rows[size_t(j) * kWidth + i];
        out[(size_t(b) * s.heads + h) * kLatent + i] = float(acc / l);
      }
    }
  return out;
}

void check_latent_attention(int batch, int heads, int context, int cache_len, int sm_count) {
  std::mt19937 rng(batch * 1000 + heads * 10 + context);
  const cuda::LatentDecodingShape s{batch, heads, 512, 64, context, cache_len};
  ASSERT_TRUE(cuda::latent_decoding_supports(s));
  const cuda::LatentDecodingSplit split = cuda::plan_latent_decoding(s, sm_count);
  HalfArray q(size_t(batch) * heads * kWidth, &rng, 2.f), cache(size_t(batch) * cache_len * kWidth, &rng, 2.f),
      out(size_t(batch) * heads * kLatent);
  // Rows past the context hold NaN: the kernel must not read them.
  for (int b = 0; b < batch; ++b)
    cudaMemset(cache.device + (size_t(b) * cache_len + context) * kWidth, 0xff, size_t(cache_len - context) * kWidth * sizeof(__half));
  float* workspace = nullptr;
  cudaMalloc(&workspace, cuda::latent_decoding_workspace_floats(s, split) * sizeof(float));
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cuda::launch_latent_decoding(s, split, {q.device, cache.device, workspace, out.device, kScale}, stream);
  cudaStreamSynchronize(stream);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_LT(relative_error(out.read(), host_latent_attention(s, q, cache)), 5e-3)
      << "batch " << batch << " heads " << heads << " context " << context << " of " << cache_len << ": " << split.splits
      << " chunks of " << split.chunk;
  cudaStreamDestroy(stream);
  cudaFree(workspace);
}

// Each shape twice: planned for 132 SMs (many chunks of one or two tiles) and for one SM (one
// chunk walking every tile through both buffers).
TEST(LatentDecoding, MatchesTheHost) {
  SKIP_WITHOUT_GPU();
  for (const int sms : {132, 1}) {
    check_latent_attention(2, 16, 300, 320, sms);   // DeepSeek-V3 over 8 GPUs; a partial last tile, NaN past it
    check_latent_attention(1, 20, 1000, 1000, sms); // a head tile of 4 heads and 12 rows of padding
    check_latent_attention(3, 128, 64, 64, sms);    // eight head tiles, one tile of keys
  }
}

TEST(LatentDecoding, RefusesWhatItIsNotBuiltFor) {
  SKIP_WITHOUT_GPU();
  const cuda::LatentDecodingShape narrow{1, 16, 256, 64, 64, 64};
  EXPECT_FALSE(cuda::latent_decoding_supports(narrow));
  EXPECT_THROW(cuda::launch_latent_decoding(narrow, cuda::plan_latent_decoding(narrow, 132), {}, nullptr), Error);
  const cuda::LatentDecodingShape shape{1, 16, 512, 64, 300, 300};
  EXPECT_THROW(cuda::launch_latent_decoding(shape, {64, 4}, {}, nullptr), Error);  // 256 positions of 300
}

// The residency the prediction assumes (latent_decoding_resident_blocks) is the kernel's.
TEST(LatentDecoding, ResidencyIsWhatThePlanDeclares) {
  SKIP_WITHOUT_GPU();
  EXPECT_EQ(cuda::latent_decoding_blocks_per_sm(), latent_decoding_resident_blocks);
}

}  // namespace
}  // namespace modelcost::testing
#endif
