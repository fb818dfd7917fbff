// The latent-decoding plan of latent_decoding_plan.h.
#include "fusion/latent_decoding_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace modelcost {
namespace {

constexpr int64_t kKeyTile = latent_decoding_key_tile;
// The longest chunk whose positions still fit an int (the kernel counts them so).
constexpr int64_t kMostChunk = std::numeric_limits<int>::max() / kKeyTile * kKeyTile;

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

}  // namespace

LatentDecodingSplit plan_latent_decoding(const LatentDecodingShape& sh, int sm_count) {
  // A shape the kernel does not take still gets a plan (the prediction prices it); never a
  // division by zero, never an overflow.
  const int64_t context = std::max<int64_t>(0, sh.context);
  const int64_t blocks = static_cast<int64_t>(std::max(1, sh.batch)) * latent_decoding_head_tiles(std::max(1, sh.heads));
  // One wave: as many chunks as leave every SM one block (a block's tiles follow one another on
  // its SM, so a second wave costs as much as the first). On an H200, 8 sequences of 2048
  // positions took 13.4 us as 16 chunks of 128 and 18.7 us as 32 chunks of 64
  // (bench/cuda/latent_decoding).
  const int64_t slots = static_cast<int64_t>(std::max(1, sm_count)) * latent_decoding_resident_blocks;
  const int64_t wanted = std::max<int64_t>(1, slots / blocks);
  int64_t chunk = ceil_div(std::min(ceil_div(context, wanted), kMostChunk), kKeyTile) * kKeyTile;
  // Not so many chunks that the merge's weights outgrow its shared memory.
  const int64_t fewest = ceil_div(ceil_div(context, latent_decoding_most_splits), kKeyTile) * kKeyTile;
  chunk = std::max({chunk, std::min(fewest, kMostChunk), kKeyTile});
  LatentDecodingSplit split;
  split.chunk = static_cast<int>(chunk);
  split.splits = static_cast<int>(std::clamp<int64_t>(ceil_div(context, chunk), 1, std::numeric_limits<int>::max()));
  return split;
}

bool latent_decoding_supports(const LatentDecodingShape& sh) {
  // The kernel is built for DeepSeek-V2/V3's widths: a 512-wide latent and a 64-wide rotary key.
  return sh.latent == 512 && sh.rope == 64 && sh.batch >= 1 && sh.heads >= 1 && sh.context > 0 &&
         sh.context <= sh.cache_len;
}

LatentDecodingWork latent_decoding_work(const LatentDecodingShape& sh, int sm_count) {
  LatentDecodingWork w;
  if (sh.batch <= 0 || sh.heads <= 0 || sh.context <= 0) return w;
  const double width = static_cast<double>(sh.latent) + sh.rope, context = static_cast<double>(sh.context);
  const double tiles = latent_decoding_head_tiles(sh.heads);
  const double cache = 2.0 * sh.batch * tiles * context * width;                           // fp16, once per head tile
  w.bytes = cache + 2.0 * sh.batch * sh.heads * (width + static_cast<double>(sh.latent));  // queries in, outputs out
  w.flops = 2.0 * sh.batch * sh.heads * context * (width + sh.latent);
  if (sm_count <= 0) return w;  // no SMs to count waves over
  const LatentDecodingSplit split = plan_latent_decoding(sh, sm_count);
  const double blocks = static_cast<double>(sh.batch) * tiles * split.splits;
  w.waves = std::ceil(blocks / (static_cast<double>(latent_decoding_resident_blocks) * sm_count));
  w.key_tiles = std::ceil(std::min(static_cast<double>(split.chunk), context) / latent_decoding_key_tile);
  const double partial = 4.0 * latent_decoding_head_tile * (sh.latent + 2);  // fp32 outputs, maximum and sum
  w.block_bytes = 2.0 * latent_decoding_head_tile * width + w.key_tiles * latent_decoding_key_tile * width * 2 + partial;
  w.merge_bytes = blocks * partial + 2.0 * sh.batch * sh.heads * sh.latent;
  return w;
}

}  // namespace modelcost
