// The decode attention kernel of multi-head latent attention (DeepSeek-V2/V3's MLA) in its absorbed
// form, as vLLM and FlashMLA run it: every query head attends over one shared cache row per
// position, the compressed latent (which is also the value) then the rotary key. Its plan is shared
// by the runtime that launches it (measure/cuda/llm/latent_decoding.cu) and the prediction that
// prices it: the context split into chunks, one block per (sequence, tile of 16 heads, chunk).
#pragma once
#include <cstdint>

namespace modelcost {

struct LatentDecodingShape {
  int batch = 0, heads = 0;
  int latent = 512, rope = 64;  // a cache row: the latent (the values too), then the rotary key
  int64_t context = 0;          // positions attended: 0 .. context - 1 of the cache
  int64_t cache_len = 0;        // rows allocated per sequence
};

struct LatentDecodingSplit {
  int chunk = 0;   // positions per block, a multiple of latent_decoding_key_tile
  int splits = 0;  // chunks over the context
};

constexpr int latent_decoding_head_tile = 16;  // query heads per block: the rows of one mma tile
constexpr int latent_decoding_key_tile = 64;   // positions per shared-memory tile
// The merge keeps one weight per chunk in shared memory: no more chunks than this.
constexpr int latent_decoding_most_splits = 4096;
// Chunk blocks resident on one SM: ~169 KiB of shared memory each (two 64-row cache tiles and the
// query tile), so one; a GPU test checks it against the occupancy calculator.
constexpr int latent_decoding_resident_blocks = 1;

constexpr int latent_decoding_head_tiles(int heads) {
  return heads > 0 ? heads / latent_decoding_head_tile + (heads % latent_decoding_head_tile != 0) : 0;
}

// One wave of chunk blocks: as many chunks as leave each SM one block, where the context allows.
LatentDecodingSplit plan_latent_decoding(const LatentDecodingShape& shape, int sm_count);
// Whether the kernels take this shape.
bool latent_decoding_supports(const LatentDecodingShape& shape);

// What the two kernels' time depends on. `bytes`: the cache read once per head tile, the queries in
// and the outputs out. `flops`: 2 x (576 for the scores + 512 for the values) per head and
// position. A block walks its chunk's key tiles one after another on its SM, so the chunk kernel
// takes `waves` (its blocks over resident blocks x SMs, rounded up) times a block's time: the
// bytes it moves (`block_bytes`: the queries, its `key_tiles` tiles, its partial output) at its
// SM's share of the bandwidth. The merge reads every block's partial output (`merge_bytes`).
struct LatentDecodingWork {
  double waves = 0, key_tiles = 0;
  double flops = 0, bytes = 0;
  double block_bytes = 0, merge_bytes = 0;
};
LatentDecodingWork latent_decoding_work(const LatentDecodingShape& shape, int sm_count);

}  // namespace modelcost
