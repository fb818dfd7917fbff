// Flash-decoding attention for one new position per sequence (flash_decoding.cu): the cached
// context is split into chunks, one block per (sequence, kv head, chunk) scores the chunk for
// every query head sharing that kv head (GQA/MQA read each K/V row once), and a second kernel
// merges the chunks' partial softmax. fp16 cache and query, fp32 arithmetic.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace modelcost::cuda {

struct FlashDecodingShape {
  int batch = 0, heads = 0, kv_heads = 0, head_dim = 0;  // head_dim 64 or 128
  int64_t context = 0;    // positions attended: 0 .. context - 1 of the cache
  int64_t cache_len = 0;  // rows allocated per (sequence, kv head)
};

struct FlashDecodingSplit {
  int chunk = 0;   // positions per block, a multiple of 32
  int splits = 0;  // chunks over the context
};

// Enough chunks for about two blocks per SM, never a chunk whose scores overflow shared memory.
FlashDecodingSplit plan_flash_decoding(const FlashDecodingShape& shape, int sm_count);
// Whether the kernels take this shape (head_dim 64 or 128, heads a multiple of kv_heads).
bool flash_decoding_supports(const FlashDecodingShape& shape);
// Floats of the partial results between the two kernels.
size_t flash_decoding_workspace_floats(const FlashDecodingShape& shape, const FlashDecodingSplit& split);

struct FlashDecodingArgs {
  const __half* q = nullptr;        // [batch, heads, head_dim]
  const __half* k_cache = nullptr;  // [batch, kv_heads, cache_len, head_dim]
  const __half* v_cache = nullptr;
  float* workspace = nullptr;       // flash_decoding_workspace_floats
  __half* out = nullptr;            // [batch, heads, head_dim]
};
// Once per device before the first launch: lets the chunk kernel use more than 48 KiB of shared memory.
void prepare_flash_decoding();
// Two kernels: the chunks, then the merge.
void launch_flash_decoding(const FlashDecodingShape& shape, const FlashDecodingSplit& split, const FlashDecodingArgs& args,
                           cudaStream_t stream);

}  // namespace modelcost::cuda
