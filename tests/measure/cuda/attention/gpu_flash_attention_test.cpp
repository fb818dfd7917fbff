// The flash-attention kernel alone against attention computed in double on the host from the
// same fp16 inputs: partial query and key tiles, an additive mask, causal masking, grouped
// key/value heads, head dims 32, 64 and 128 and the sizes between (run padded), and both kernels (row blocks of four warps for large
// grids; key-split blocks of two or four warps, merged at the end, for small ones), a prefill chunk
// after cached positions written token-major, and MLA's 192-wide queries and keys with 128-wide
// values. Skips without an NVIDIA GPU.
#ifdef MODELCOST_HAVE_CUDA

#include <cuda_fp16.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/device_buffer.h"
#include "measure/cuda/gpu_check.h"
#include "pointwise/fused_kernels.h"

namespace modelcost::testing {
namespace {

using cuda::AttentionShape;
using cuda::DeviceBuffer;

std::vector<__half> random_halves(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<__half> v(n);
  for (auto& x : v) x = __float2half(dist(rng));
  return v;
}

DeviceBuffer upload(const std::vector<__half>& host) {
  DeviceBuffer d(host.size() * sizeof(__half));
  EXPECT_EQ(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(__half), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

int64_t value_width(const AttentionShape& s) { return s.dv ? s.dv : s.d; }

// O for one (bh, i): softmax over j of scale q.k + mask (causal: j <= i + causal_offset) applied to
// V (rows value_width(s) wide).
void reference_row(const AttentionShape& s, const std::vector<__half>& q, const std::vector<__half>& k,
                   const std::vector<__half>& v, const std::vector<__half>& mask, int64_t bh, int64_t i, double* out) {
  const int64_t kv = bh / s.group, b = bh / s.heads, h = bh % s.heads;
  std::vector<double> p(static_cast<size_t>(s.sk), -INFINITY);
  double top = -INFINITY;
  for (int64_t j = 0; j < s.sk; ++j) {
    if (s.causal && j > i + s.causal_offset) continue;
    double dot = 0;
    for (int64_t c = 0; c < s.d; ++c)
      dot += double(__half2float(q[(bh * s.sq + i) * s.d + c])) * __half2float(k[(kv * s.sk + j) * s.d + c]);
    p[j] = dot * s.scale;
    if (!mask.empty()) p[j] += __half2float(mask[b * s.mask_b + h * s.mask_h + i * s.mask_i + j * s.mask_j]);
    top = std::max(top, p[j]);
  }
  double sum = 0;
  for (auto& x : p) sum += x = std::isinf(x) ? 0 : std::exp(x - top);
  const int64_t dv = value_width(s);
  for (int64_t c = 0; c < dv; ++c) {
    double acc = 0;
    for (int64_t j = 0; j < s.sk; ++j) acc += p[j] * __half2float(v[(kv * s.sk + j) * dv + c]);
    out[c] = acc / sum;
  }
}

// Runs the kernel on random inputs (a [batch, 1, 1, sk] mask where `masked`) and returns
// ||gpu - reference|| / ||reference||.
double attention_error(AttentionShape s, bool masked) {
  const int64_t kv_heads = s.bh / s.group, dv = value_width(s);
  const auto q = random_halves(s.bh * s.sq * s.d, -1, 1, 1), k = random_halves(kv_heads * s.sk * s.d, -1, 1, 2),
             v = random_halves(kv_heads * s.sk * dv, -1, 1, 3);
  std::vector<__half> mask;
  if (masked) {
    const int64_t batch = s.bh / s.heads;
    mask = random_halves(batch * s.sk, -2, 2, 4);
    for (int64_t b = 0; b < batch; ++b)  // padding keys at the end of each sequence, as a tokenizer's mask
      for (int64_t j = s.sk - 1 - b % 5; j < s.sk; ++j) mask[b * s.sk + j] = __float2half(-10000.f);
    s.mask_b = s.sk;
    s.mask_j = 1;
  }
  DeviceBuffer dq = upload(q), dk = upload(k), dvalues = upload(v), dm = masked ? upload(mask) : DeviceBuffer();
  const size_t out_size = static_cast<size_t>(s.bh * s.sq * dv);
  DeviceBuffer dout(out_size * sizeof(__half));
  s.mask = masked ? dm.data() : nullptr;
  cuda::launch_flash_attention(s, dq.data(), dk.data(), dvalues.data(), dout.data(), nullptr);
  std::vector<__half> out(out_size);
  EXPECT_EQ(cudaMemcpy(out.data(), dout.data(), out.size() * sizeof(__half), cudaMemcpyDeviceToHost), cudaSuccess);
  double diff = 0, norm = 0;
  std::vector<double> ref(static_cast<size_t>(dv));
  for (int64_t bh = 0; bh < s.bh; ++bh)
    for (int64_t i = 0; i < s.sq; ++i) {
      reference_row(s, q, k, v, mask, bh, i, ref.data());
      for (int64_t c = 0; c < dv; ++c) {
        const int64_t row = s.token_major_out ? (bh / s.heads * s.sq + i) * s.heads + bh % s.heads : bh * s.sq + i;
        const double g = __half2float(out[row * dv + c]);
        diff += (g - ref[c]) * (g - ref[c]);
        norm += ref[c] * ref[c];
      }
    }
  return std::isfinite(diff) ? std::sqrt(diff / norm) : 1e9;
}

AttentionShape shape(int64_t batch, int64_t heads, int64_t sq, int64_t sk, int64_t d) {
  AttentionShape s;
  s.bh = batch * heads;
  s.heads = heads;
  s.sq = sq;
  s.sk = sk;
  s.d = d;
  s.scale = static_cast<float>(1 / std::sqrt(double(d)));
  return s;
}

TEST(MeasureGpuGroups, FlashAttentionKernelPartialTilesAndMask) {
  SKIP_WITHOUT_GPU();
  EXPECT_LT(attention_error(shape(1, 3, 197, 197, 64), false), 5e-3);  // ViT's 197 tokens, key-split blocks
  EXPECT_LT(attention_error(shape(4, 10, 197, 197, 64), true), 5e-3);   // row blocks, masked
  EXPECT_LT(attention_error(shape(2, 2, 33, 100, 128), true), 5e-3);    // keys split over two warps
  EXPECT_LT(attention_error(shape(1, 2, 20, 300, 64), true), 5e-3);     // five key tiles over four warps
  EXPECT_LT(attention_error(shape(3, 50, 50, 70, 32), false), 5e-3);
  EXPECT_LT(attention_error(shape(12, 12, 70, 70, 128), true), 5e-3);
}

TEST(MeasureGpuGroups, FlashAttentionKernelCausalAndGroupedHeads) {
  SKIP_WITHOUT_GPU();
  AttentionShape causal = shape(2, 3, 130, 130, 64);
  causal.causal = true;
  EXPECT_LT(attention_error(causal, true), 5e-3);
  AttentionShape wide = shape(10, 14, 90, 90, 32);  // enough blocks for four warps each
  wide.causal = true;
  EXPECT_LT(attention_error(wide, false), 5e-3);
  AttentionShape grouped = shape(2, 4, 65, 81, 128);
  grouped.group = 2;  // two query heads per key/value head
  EXPECT_LT(attention_error(grouped, false), 5e-3);
}

// A prefill chunk of 70 queries after 130 cached positions (keys 0 .. 199), eight query heads on
// two key/value heads, O written [batch, sq, heads, d]: both kernels.
TEST(MeasureGpuGroups, FlashAttentionKernelChunkAfterCachedPositions) {
  SKIP_WITHOUT_GPU();
  for (const int64_t batch : {1, 6}) {
    AttentionShape chunk = shape(batch, 8, 70, 200, 64);
    chunk.group = 4;
    chunk.causal = true;
    chunk.causal_offset = 130;
    chunk.token_major_out = true;
    EXPECT_LT(attention_error(chunk, false), 5e-3) << "batch " << batch;
  }
  AttentionShape prompt = shape(2, 4, 300, 300, 128);  // a whole prompt: no offset, token-major
  prompt.causal = true;
  prompt.token_major_out = true;
  EXPECT_LT(attention_error(prompt, false), 5e-3);
}

// Head sizes the kernel is not built for run as the next one's with zero-filled columns: 16-byte
// copies where d is a multiple of 8, 8-byte ones otherwise; the padding is never stored (a store
// past d would overwrite the next row's first columns).
TEST(MeasureGpuGroups, FlashAttentionKernelPaddedHeadSizes) {
  SKIP_WITHOUT_GPU();
  for (const int64_t d : {36, 48, 60, 80, 100}) {
    EXPECT_LT(attention_error(shape(1, 3, 197, 197, d), true), 5e-3) << "key-split, d " << d;
    EXPECT_LT(attention_error(shape(8, 4, 256, 256, d), false), 5e-3) << "row blocks, d " << d;
    AttentionShape token_major = shape(2, 4, 70, 90, d);
    token_major.token_major_out = true;
    EXPECT_LT(attention_error(token_major, false), 5e-3) << "token-major, d " << d;
  }
}

// DeepSeek MLA's prefill: queries and keys 192 wide (128 + 64 rotary columns), values and output
// 128 wide, a chunk after cached positions written token-major; the kernels built for 192-wide keys
// and 128-wide values, only 128 columns a row stored (a wider store would overwrite the next row). Row blocks, key-split blocks of four warps and of two (keys within two tiles); then values
// as wide as the keys, and a width between (160) with values not a multiple of 8.
TEST(MeasureGpuGroups, FlashAttentionKernelWideQueryKeyNarrowValue) {
  SKIP_WITHOUT_GPU();
  struct Case {
    int64_t batch, heads, tokens, past;
    const char* what;
  };
  for (const Case& c : {Case{2, 16, 200, 100, "row blocks"}, Case{1, 2, 20, 300, "key-split, four warps"},
                        Case{1, 2, 20, 100, "key-split, two warps"}}) {
    AttentionShape mla = cuda::causal_prefill_shape(c.batch, c.heads, c.heads, 192, c.tokens, c.past);
    mla.dv = 128;
    EXPECT_LT(attention_error(mla, false), 5e-3) << c.what;
  }
  EXPECT_LT(attention_error(shape(4, 12, 100, 150, 192), true), 5e-3) << "values as wide as the keys";
  AttentionShape padded = shape(1, 2, 33, 100, 160);  // run as 192 and 128; values in 8-byte copies
  padded.dv = 100;
  EXPECT_LT(attention_error(padded, false), 5e-3) << "d 160, dv 100";
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
