// Kernels of step_kernels.h. A decode step's rows are few (one token per sequence), so each
// kernel gives a row or a head to one block and reads half2 pairs; a prefill's are many, and the
// norm gives each row a warp instead.
#include <algorithm>
#include <cstdint>

#include "core/block_reduce.cuh"
#include "core/cuda_check.h"
#include "llm/rotary.cuh"
#include "llm/step_kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int kNormThreads = 256;
constexpr int kNormPairsPerThread = 16;  // rows up to 8192 wide stay in registers

// One block per row; the row and the weights are read once, up front, so the two passes cost one
// memory latency.
__global__ void rms_norm_kernel(RmsNormArgs a) {
  __shared__ float scratch[32];
  const int pairs = a.width / 2;
  const __half2* x = reinterpret_cast<const __half2*>(a.x + static_cast<int64_t>(blockIdx.x) * a.row_stride());
  const __half2* g = reinterpret_cast<const __half2*>(a.gamma);
  __half2* y = reinterpret_cast<__half2*>(a.y) + static_cast<int64_t>(blockIdx.x) * pairs;
  float2 xs[kNormPairsPerThread], gs[kNormPairsPerThread];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kNormPairsPerThread; ++k) {
    const int i = threadIdx.x + k * kNormThreads;
    if (i >= pairs) break;
    xs[k] = __half22float2(x[i]);
    gs[k] = __half22float2(g[i]);
  }
#pragma unroll
  for (int k = 0; k < kNormPairsPerThread; ++k) {
    if (threadIdx.x + k * kNormThreads >= pairs) break;
    sum += xs[k].x * xs[k].x + xs[k].y * xs[k].y;
  }
  for (int i = threadIdx.x + kNormPairsPerThread * kNormThreads; i < pairs; i += kNormThreads) {
    const float2 v = __half22float2(x[i]);
    sum += v.x * v.x + v.y * v.y;
  }
  const float scale = rsqrtf(block_sum(sum, scratch) / a.width + a.eps);
#pragma unroll
  for (int k = 0; k < kNormPairsPerThread; ++k) {
    const int i = threadIdx.x + k * kNormThreads;
    if (i >= pairs) break;
    y[i] = __floats2half2_rn(xs[k].x * scale * gs[k].x, xs[k].y * scale * gs[k].y);
  }
  for (int i = threadIdx.x + kNormPairsPerThread * kNormThreads; i < pairs; i += kNormThreads) {
    const float2 v = __half22float2(x[i]), w = __half22float2(g[i]);
    y[i] = __floats2half2_rn(v.x * scale * w.x, v.y * scale * w.y);
  }
}

// A prefill's many rows: one warp per row (no block barrier, 8 rows per block in flight), each lane
// holding its 16-byte pieces of the row in registers; rows up to kWarpRowHalves wide.
constexpr int kWarpRowPieces = 16;  // 16-byte pieces per lane: 32 x 16 x 8 = 4096 halves
constexpr int kWarpRowHalves = 32 * kWarpRowPieces * 8;
constexpr int kRowsPerBlock = 8;

__global__ void rms_norm_warp_rows_kernel(RmsNormArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= a.rows) return;
  const int pieces = a.width / 8;
  const uint4* x = reinterpret_cast<const uint4*>(a.x + row * a.row_stride());
  const uint4* g = reinterpret_cast<const uint4*>(a.gamma);
  uint4* y = reinterpret_cast<uint4*>(a.y + row * a.width);
  uint4 xs[kWarpRowPieces];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kWarpRowPieces; ++k) {
    const int i = lane + 32 * k;
    if (i < pieces) xs[k] = x[i];
  }
#pragma unroll
  for (int k = 0; k < kWarpRowPieces; ++k) {
    if (lane + 32 * k >= pieces) break;
    const __half2* h = reinterpret_cast<const __half2*>(&xs[k]);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 v = __half22float2(h[j]);
      sum += v.x * v.x + v.y * v.y;
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
  const float scale = rsqrtf(sum / a.width + a.eps);
#pragma unroll
  for (int k = 0; k < kWarpRowPieces; ++k) {
    const int i = lane + 32 * k;
    if (i >= pieces) break;
    const uint4 w = g[i];
    const __half2* h = reinterpret_cast<const __half2*>(&xs[k]);
    const __half2* gh = reinterpret_cast<const __half2*>(&w);
    uint4 out;
    __half2* o = reinterpret_cast<__half2*>(&out);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 v = __half22float2(h[j]), s = __half22float2(gh[j]);
      o[j] = __floats2half2_rn(v.x * scale * s.x, v.y * scale * s.y);
    }
    y[i] = out;
  }
}

__global__ void embedding_kernel(const int32_t* ids, const __half2* table, __half2* y, int pairs) {
  const int64_t row = ids[blockIdx.x];
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) y[static_cast<int64_t>(blockIdx.x) * pairs + i] = table[row * pairs + i];
}

// Where head `head` of the row (sequence b, its new token `token`) goes: q's rows, or the key or
// value cache at the token's position; only q and k are rotated.
struct RotaryTarget {
  __half* out;
  bool rotate;
};
__device__ __forceinline__ RotaryTarget rotary_target(const RotaryAppendArgs& a, int b, int token, int head) {
  if (head < a.heads) return {a.q + ((static_cast<int64_t>(b) * a.heads + head) * a.tokens + token) * a.head_dim, true};
  const bool is_key = head < a.heads + a.kv_heads;
  const int kv = head - a.heads - (is_key ? 0 : a.kv_heads);
  const int64_t position = a.position + token;
  return {(is_key ? a.k_cache : a.v_cache) + ((static_cast<int64_t>(b) * a.kv_heads + kv) * a.cache_len + position) * a.head_dim,
          is_key};
}

// Block (row, group of heads of q|k|v); a thread rotates the pair (i, i + head_dim / 2) of one head.
// A decode step gives each head its own block (few rows: spread wide); a prefill gives a block
// about 256 threads' worth of heads (many rows: fewer, fuller blocks).
__global__ void rotary_append_kernel(RotaryAppendArgs a, int heads_per_block) {
  const int row = blockIdx.x, half_dim = a.head_dim / 2, total_heads = a.heads + 2 * a.kv_heads;
  const int head = blockIdx.y * heads_per_block + threadIdx.x / half_dim, i = threadIdx.x % half_dim;
  if (head >= total_heads || threadIdx.x >= heads_per_block * half_dim) return;
  const int b = row / a.tokens, token = row % a.tokens;
  const int64_t position = a.position + token;
  const __half* in = a.qkv + static_cast<int64_t>(row) * total_heads * a.head_dim + static_cast<int64_t>(head) * a.head_dim;
  const RotaryTarget target = rotary_target(a, b, token, head);
  __half* out = target.out;
  const bool rotate = target.rotate;
  const float x0 = __half2float(in[i]), x1 = __half2float(in[i + half_dim]);
  if (!rotate) {
    out[i] = in[i];
    out[i + half_dim] = in[i + half_dim];
    return;
  }
  float s, c;
  rotary_angle(position, i, a.head_dim, __log2f(a.theta), &s, &c);
  out[i] = __float2half(x0 * c - x1 * s);
  out[i + half_dim] = __float2half(x1 * c + x0 * s);
}

// A prefill's rows: a block per row, each thread rotating 8 consecutive pairs of one head with
// 16-byte loads of both halves (head_dim a multiple of 16, rows 16-byte aligned).
__global__ void rotary_append_rows_kernel(RotaryAppendArgs a) {
  const int row = blockIdx.x, half_dim = a.head_dim / 2, per_head = half_dim / 8;
  const int total_heads = a.heads + 2 * a.kv_heads;
  const int b = row / a.tokens, token = row % a.tokens;
  const int64_t position = a.position + token;
  const float log2_theta = __log2f(a.theta);
  for (int t = threadIdx.x; t < total_heads * per_head; t += blockDim.x) {
    const int head = t / per_head, i0 = (t % per_head) * 8;
    const __half* in = a.qkv + static_cast<int64_t>(row) * total_heads * a.head_dim + static_cast<int64_t>(head) * a.head_dim;
    const RotaryTarget target = rotary_target(a, b, token, head);
    __half* out = target.out;
    const bool rotate = target.rotate;
    const uint4 lo = *reinterpret_cast<const uint4*>(in + i0), hi = *reinterpret_cast<const uint4*>(in + i0 + half_dim);
    uint4 out_lo = lo, out_hi = hi;
    if (rotate) rotate_eight_pairs(lo, hi, out_lo, out_hi, i0, a.head_dim, position, log2_theta);
    *reinterpret_cast<uint4*>(out + i0) = out_lo;
    *reinterpret_cast<uint4*>(out + i0 + half_dim) = out_hi;
  }
}

// Rows on the grid's x (up to 2^31: a prefill's token-expert pairs), column blocks on y.
__global__ void silu_mul_kernel(const __half2* gate_up, __half2* y, int pairs) {
  const int64_t row = blockIdx.x;
  const int i = blockIdx.y * blockDim.x + threadIdx.x;
  if (i >= pairs) return;
  const float2 g = __half22float2(gate_up[static_cast<int64_t>(row) * 2 * pairs + i]);
  const float2 u = __half22float2(gate_up[static_cast<int64_t>(row) * 2 * pairs + pairs + i]);
  y[static_cast<int64_t>(row) * pairs + i] = __floats2half2_rn(g.x / (1.f + __expf(-g.x)) * u.x, g.y / (1.f + __expf(-g.y)) * u.y);
}

__global__ void gelu_kernel(__half* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = __half2float(y[i]);
  y[i] = __float2half(0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
}

}  // namespace

void launch_rms_norm(const RmsNormArgs& a, cudaStream_t stream) {
  // Many rows of 16-byte aligned width: a warp per row, once its blocks of 8 rows fill about half
  // the multiprocessors (on an H100, 272 rows of 4096 took 11 us as 34 such blocks and 8 us a block
  // per row; 1024 rows 10 us as 128 blocks and 16 us a block per row); fewer rows (a decode's, a
  // short chunk's): a block each.
  const bool aligned = a.width % 8 == 0 && a.row_stride() % 8 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(a.y) % 16 == 0 && reinterpret_cast<uintptr_t>(a.gamma) % 16 == 0;
  if (a.rows >= 512 && aligned && a.width <= kWarpRowHalves) {
    rms_norm_warp_rows_kernel<<<(a.rows + kRowsPerBlock - 1) / kRowsPerBlock, 32 * kRowsPerBlock, 0, stream>>>(a);
    MC_CUDA_CHECK_LAUNCH();
    return;
  }
  rms_norm_kernel<<<a.rows, kNormThreads, 0, stream>>>(a);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_embedding(const int32_t* ids, const __half* table, __half* y, int rows, int width, cudaStream_t stream) {
  embedding_kernel<<<rows, 256, 0, stream>>>(ids, reinterpret_cast<const __half2*>(table), reinterpret_cast<__half2*>(y), width / 2);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_rotary_append(const RotaryAppendArgs& a, cudaStream_t stream) {
  const int half_dim = a.head_dim / 2, total_heads = a.heads + 2 * a.kv_heads;
  const bool aligned = a.head_dim % 16 == 0 && reinterpret_cast<uintptr_t>(a.qkv) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(a.q) % 16 == 0 && reinterpret_cast<uintptr_t>(a.k_cache) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(a.v_cache) % 16 == 0;
  if (a.tokens > 1 && aligned) {
    rotary_append_rows_kernel<<<a.batch * a.tokens, 128, 0, stream>>>(a);
    MC_CUDA_CHECK_LAUNCH();
    return;
  }
  const int heads_per_block = a.tokens == 1 ? 1 : std::max(1, std::min(total_heads, 256 / half_dim));
  const dim3 grid(a.batch * a.tokens, (total_heads + heads_per_block - 1) / heads_per_block);
  rotary_append_kernel<<<grid, (heads_per_block * half_dim + 31) / 32 * 32, 0, stream>>>(a, heads_per_block);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_silu_mul(const __half* gate_up, __half* y, int rows, int width, cudaStream_t stream) {
  const int pairs = width / 2;
  const dim3 grid(rows, (pairs + 255) / 256);
  silu_mul_kernel<<<grid, 256, 0, stream>>>(reinterpret_cast<const __half2*>(gate_up), reinterpret_cast<__half2*>(y), pairs);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_gelu(__half* y, int64_t n, cudaStream_t stream) {
  gelu_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(y, n);
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
