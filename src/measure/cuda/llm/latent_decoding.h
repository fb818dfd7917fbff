// Decode attention of multi-head latent attention (DeepSeek-V2/V3's MLA) in the absorbed form
// vLLM and FlashMLA run (latent_decoding.cu): one new position per sequence, every query head
// attending over one shared cache row per position (576 = latent 512 + rotary 64), the values the
// rows' first 512 columns. The context is split into chunks, one block per (sequence, tile of 16
// heads, chunk) on tensor cores; a second kernel merges the chunks' partial softmax. fp16 query,
// cache and output, fp32 accumulation.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "fusion/latent_decoding_plan.h"

namespace modelcost::cuda {

// The plan (chunks over the context) is the prediction's too: fusion/latent_decoding_plan.h.
using modelcost::LatentDecodingShape;
using modelcost::LatentDecodingSplit;
using modelcost::latent_decoding_supports;
using modelcost::plan_latent_decoding;

struct LatentDecodingArgs {
  const __half* q = nullptr;      // [batch, heads, 576]: the absorbed query (latent part), then its rotary part
  const __half* cache = nullptr;  // [batch, cache_len, 576]: positions 0 .. context - 1 attended
  float* workspace = nullptr;     // latent_decoding_workspace_floats
  __half* out = nullptr;          // [batch, heads, 512]
  float scale = 1.f;              // of the scores (DeepSeek: its softmax scale, 1 / sqrt(192) before YaRN)
};

// Floats of the partial results between the two kernels: [batch * heads * splits][512] outputs,
// then [batch * heads * splits][2] (maximum in base-2 units, sum).
size_t latent_decoding_workspace_floats(const LatentDecodingShape& shape, const LatentDecodingSplit& split);
// Two kernels on `stream`, the chunks then the merge; no synchronisation. Throws Error for a shape
// or split the kernels do not take.
void launch_latent_decoding(const LatentDecodingShape& shape, const LatentDecodingSplit& split, const LatentDecodingArgs& args,
                            cudaStream_t stream);
// Chunk blocks resident on one SM (the occupancy calculator's answer), which the prediction takes
// as latent_decoding_resident_blocks.
int latent_decoding_blocks_per_sm();

}  // namespace modelcost::cuda
