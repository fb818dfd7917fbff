// The small kernels of multi-head latent attention in the deployed step (latent_kernels.cu): the
// latent appended to the cache with its rotated key, and a prefill's keys and values laid out for
// flash attention. fp16 storage, fp32 arithmetic; every launcher enqueues and checks, none syncs.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace modelcost::cuda {

// The widths of one layer's latent attention on one device.
struct LatentWidths {
  int heads = 0, latent = 512, rope = 64, nope = 128, value = 128;
  __host__ __device__ int qk() const { return nope + rope; }
  __host__ __device__ int cache_row() const { return latent + rope; }
};

// `batch` sequences of `tokens` new rows each (row r = sequence r / tokens): the latent of each
// row normed (DeepSeek's kv_a_layernorm) and written with its rotated key (rotate-half, base
// theta, at position + token) to the cache [batch, cache_len, latent + rope]; each head's query
// rotary part rotated. A prefill (absorbed false) writes the queries as flash attention reads
// them, [batch, heads, tokens, nope + rope]; a decode (absorbed, one token) writes the rotary
// parts into the latent queries [batch, heads, latent + rope] at column `latent` (the absorbed
// query product writes the rest).
struct LatentAppendArgs {
  LatentWidths w;
  const __half* q = nullptr;   // [rows, heads * (nope + rope)], rows q_ld apart
  const __half* kv = nullptr;  // [rows, latent + rope], rows kv_ld apart
  int64_t q_ld = 0, kv_ld = 0;
  const __half* kv_gamma = nullptr;  // [latent]
  __half* cache = nullptr;
  __half* q_out = nullptr;
  bool absorbed = false;
  int batch = 0, tokens = 1;
  int64_t position = 0, cache_len = 0;
  float theta = 10000.f, eps = 1e-6f;
};
void launch_latent_append(const LatentAppendArgs& a, cudaStream_t stream);

// A prefill's keys and values from the up-projected latents of its `keys` cached positions per
// sequence: k = [the head's key part | the shared rotary key], v = the head's value part.
struct LatentExpandArgs {
  LatentWidths w;
  const __half* up = nullptr;     // [batch * keys, heads * (nope + value)]: per head its key part, then its value part
  const __half* cache = nullptr;  // [batch, keys, latent + rope]: the rotary key at column latent
  __half* k = nullptr;            // [batch, heads, keys, nope + rope]
  __half* v = nullptr;            // [batch, heads, keys, value]
  int batch = 0;
  int64_t keys = 0;
};
void launch_latent_expand(const LatentExpandArgs& a, cudaStream_t stream);

}  // namespace modelcost::cuda
