// Flash-decoding attention for one new position per sequence (flash_decoding.cu): the cached
// context is split into chunks, one block per (sequence, kv head, chunk) scores the chunk for
// every query head sharing that kv head (GQA/MQA read each K/V row once), and a second kernel
// merges the chunks' partial softmax. fp16 cache and query, fp32 arithmetic.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fusion/flash_decoding_plan.h"

namespace modelcost::cuda {

// The plan (chunks over the context) is the prediction's too: fusion/flash_decoding_plan.h.
using modelcost::FlashDecodingShape;
using modelcost::FlashDecodingSplit;
using modelcost::flash_decoding_supports;
using modelcost::plan_flash_decoding;

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
// Chunk blocks of this shape resident on one SM (the occupancy calculator's answer), which the
// prediction takes as flash_decoding_resident_blocks.
int flash_decoding_blocks_per_sm(const FlashDecodingShape& shape, const FlashDecodingSplit& split);
// Two kernels: the chunks, then the merge.
void launch_flash_decoding(const FlashDecodingShape& shape, const FlashDecodingSplit& split, const FlashDecodingArgs& args,
                           cudaStream_t stream);

}  // namespace modelcost::cuda
