// The small kernels of a deployed decoder step (step_kernels.cu), for a decode's few rows and a
// prefill's many: the work a serving runtime runs between its GEMMs and its attention. fp16 storage, fp32 arithmetic. Every launcher
// enqueues on the given stream and checks the launch; none synchronises.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace modelcost::cuda {

// rows x width: y = x / rms(x) * gamma (RMSNorm, eps inside the root).
struct RmsNormArgs {
  const __half* x = nullptr;
  const __half* gamma = nullptr;
  __half* y = nullptr;
  int rows = 0, width = 0;
  float eps = 1e-5f;
  int64_t x_ld = 0;  // halves between rows of x (0: width): the norm of a slice of wider rows
  __host__ __device__ int64_t row_stride() const { return x_ld > 0 ? x_ld : width; }
};
void launch_rms_norm(const RmsNormArgs& a, cudaStream_t stream);

// The rows of `table` named by `ids` (the token embedding): y[r] = table[ids[r]].
void launch_embedding(const int32_t* ids, const __half* table, __half* y, int rows, int width, cudaStream_t stream);

// `tokens` new positions per sequence (1 in a decode step, a chunk in a prefill): splits the fused
// projection's rows [q | k | v] (heads, kv_heads, kv_heads of head_dim; batch x tokens rows),
// rotates q and k (rotate-half convention, base theta), writes q to `q` [batch, heads, tokens,
// head_dim] and k, v into the caches [batch, kv_heads, cache_len, head_dim] at `position` + token.
struct RotaryAppendArgs {
  const __half* qkv = nullptr;
  __half* q = nullptr;
  __half* k_cache = nullptr;
  __half* v_cache = nullptr;
  int batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int tokens = 1;
  int64_t position = 0, cache_len = 0;
  float theta = 10000.f;
};
void launch_rotary_append(const RotaryAppendArgs& a, cudaStream_t stream);

// The gated MLP's activation: rows of [gate (width) | up (width)] to silu(gate) * up (rows x width).
void launch_silu_mul(const __half* gate_up, __half* y, int rows, int width, cudaStream_t stream);
// The plain MLP's activation in place: y = gelu(y) (tanh form), n elements.
void launch_gelu(__half* y, int64_t n, cudaStream_t stream);

}  // namespace modelcost::cuda
