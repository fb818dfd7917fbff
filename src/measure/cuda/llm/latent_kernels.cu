// Kernels of latent_kernels.h: blocks per row (a new token, or a cached position); the widths
// DeepSeek's (latent 512, rotary 64, key and value parts 128), multiples of 16 halves, rows 16-byte aligned.
#include <cmath>

#include "core/block_reduce.cuh"
#include "core/cuda_check.h"
#include "llm/latent_kernels.h"
#include "llm/rotary.cuh"

namespace modelcost::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kAppendThreads = 128;

// Pairs i0 .. i0 + 7 of a rotary part of width `rope` at `position`, from `in` to `out`.
__device__ __forceinline__ void rotate_eight(const __half* in, __half* out, int i0, int rope, int64_t position, float log2_theta) {
  const int half = rope / 2;
  uint4 out_lo, out_hi;
  rotate_eight_pairs(*reinterpret_cast<const uint4*>(in + i0), *reinterpret_cast<const uint4*>(in + i0 + half), out_lo, out_hi, i0,
                     rope, position, log2_theta);
  *reinterpret_cast<uint4*>(out + i0) = out_lo;
  *reinterpret_cast<uint4*>(out + i0 + half) = out_hi;
}

// Block (row, 0): the latent normed (each thread four halves) and the rotary key rotated into the cache.
__device__ void append_latent(const LatentAppendArgs& a, int64_t row, int64_t seq, int64_t position) {
  __shared__ float scratch[32];
  const LatentWidths& w = a.w;
  const __half* kv = a.kv + row * a.kv_ld;
  __half* cache = a.cache + (seq * a.cache_len + position) * w.cache_row();
  // The key first: its loads overlap the latent's, not wait for the norm.
  if (threadIdx.x < w.rope / 16) rotate_eight(kv + w.latent, cache + w.latent, 8 * threadIdx.x, w.rope, position, __log2f(a.theta));
  float ss = 0.f;
  for (int i = 4 * threadIdx.x; i < w.latent; i += 4 * kAppendThreads) {
    const uint2 v = *reinterpret_cast<const uint2*>(kv + i);
    const float2 x0 = __half22float2(*reinterpret_cast<const __half2*>(&v.x)), x1 = __half22float2(*reinterpret_cast<const __half2*>(&v.y));
    ss += x0.x * x0.x + x0.y * x0.y + x1.x * x1.x + x1.y * x1.y;
  }
  const float scale = rsqrtf(block_sum(ss, scratch) / w.latent + a.eps);
  for (int i = 4 * threadIdx.x; i < w.latent; i += 4 * kAppendThreads) {
    const uint2 v = *reinterpret_cast<const uint2*>(kv + i), g = *reinterpret_cast<const uint2*>(a.kv_gamma + i);
    const float2 x0 = __half22float2(*reinterpret_cast<const __half2*>(&v.x)), x1 = __half22float2(*reinterpret_cast<const __half2*>(&v.y));
    const float2 g0 = __half22float2(*reinterpret_cast<const __half2*>(&g.x)), g1 = __half22float2(*reinterpret_cast<const __half2*>(&g.y));
    const __half2 y0 = __floats2half2_rn(x0.x * scale * g0.x, x0.y * scale * g0.y);
    const __half2 y1 = __floats2half2_rn(x1.x * scale * g1.x, x1.y * scale * g1.y);
    *reinterpret_cast<uint2*>(cache + i) = make_uint2(*reinterpret_cast<const uint32_t*>(&y0), *reinterpret_cast<const uint32_t*>(&y1));
  }
}

// Block (row, 1 + g): heads g * heads_per_block onward. A prefill copies each head's key part (16
// bytes a thread) and rotates its rotary part to the head-major queries; a decode rotates the
// rotary part into the absorbed queries.
__device__ void append_queries(const LatentAppendArgs& a, int64_t row, int64_t seq, int64_t token, int64_t position,
                               int heads_per_block) {
  const LatentWidths& w = a.w;
  const int copies = a.absorbed ? 0 : w.nope / 8, rotations = w.rope / 16, per_head = copies + rotations;
  const int first = (blockIdx.y - 1) * heads_per_block, heads = min(heads_per_block, w.heads - first);
  const float log2_theta = __log2f(a.theta);
  for (int t = threadIdx.x; t < heads * per_head; t += kAppendThreads) {
    const int h = first + t / per_head, p = t % per_head;
    const __half* in = a.q + row * a.q_ld + h * w.qk();
    __half* out = a.absorbed ? a.q_out + (seq * w.heads + h) * w.cache_row() + w.latent - w.nope
                             : a.q_out + ((seq * w.heads + h) * a.tokens + token) * w.qk();
    if (p < copies) reinterpret_cast<uint4*>(out)[p] = reinterpret_cast<const uint4*>(in)[p];
    else rotate_eight(in + w.nope, out + w.nope, 8 * (p - copies), w.rope, position, log2_theta);
  }
}

__global__ void __launch_bounds__(kAppendThreads) latent_append_kernel(LatentAppendArgs a, int heads_per_block) {
  const int64_t row = blockIdx.x, seq = row / a.tokens, token = row % a.tokens, position = a.position + token;
  if (blockIdx.y == 0) append_latent(a, row, seq, position);
  else append_queries(a, row, seq, token, position, heads_per_block);
}

// One block per cached position of a sequence: 16-byte pieces of each head's key part, the shared
// rotary key and the value part.
__global__ void __launch_bounds__(kThreads) latent_expand_kernel(LatentExpandArgs a) {
  const LatentWidths& w = a.w;
  const int64_t row = blockIdx.x, seq = row / a.keys, key = row % a.keys;
  const uint4* up = reinterpret_cast<const uint4*>(a.up + row * w.heads * (w.nope + w.value));
  const uint4* rope = reinterpret_cast<const uint4*>(a.cache + row * w.cache_row() + w.latent);
  const int nope = w.nope / 8, pe = w.rope / 8, value = w.value / 8, per_head = nope + pe + value;
  for (int i = threadIdx.x; i < w.heads * per_head; i += kThreads) {
    const int h = i / per_head, p = i % per_head;
    const int64_t head_row = (seq * w.heads + h) * a.keys + key;
    uint4* k = reinterpret_cast<uint4*>(a.k + head_row * w.qk());
    if (p < nope) k[p] = up[h * (nope + value) + p];
    else if (p < nope + pe) k[p] = rope[p - nope];
    else reinterpret_cast<uint4*>(a.v + head_row * w.value)[p - nope - pe] = up[h * (nope + value) + nope + (p - nope - pe)];
  }
}

}  // namespace

void launch_latent_append(const LatentAppendArgs& a, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(a.batch) * a.tokens;
  if (rows == 0) return;
  // A decode's few rows spread their heads over more blocks; a prefill's many rows take fuller ones.
  const int heads_per_block = a.tokens == 1 ? 4 : 8;
  const dim3 grid(static_cast<unsigned>(rows), 1 + (a.w.heads + heads_per_block - 1) / heads_per_block);
  latent_append_kernel<<<grid, kAppendThreads, 0, stream>>>(a, heads_per_block);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_latent_expand(const LatentExpandArgs& a, cudaStream_t stream) {
  const int64_t rows = a.batch * a.keys;
  if (rows == 0) return;
  latent_expand_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(a);
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
