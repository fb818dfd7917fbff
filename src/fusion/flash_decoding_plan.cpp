// The flash-decoding plan of flash_decoding_plan.h.
#include "fusion/flash_decoding_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace modelcost {
namespace {
constexpr int64_t kScoreFloats = 8192;  // the kernel's shared-memory budget for a chunk's scores (32 KiB)
constexpr int64_t kLeastChunk = 64;     // fewer positions leave most of a block idle while it scores
}  // namespace

FlashDecodingSplit plan_flash_decoding(const FlashDecodingShape& sh, int sm_count) {
  // A shape the kernel does not take (flash_decoding_supports) still gets a plan: the prediction
  // prices it so; never a division by zero.
  const int group = sh.kv_heads > 0 ? std::max(1, sh.heads / sh.kv_heads) : 1;
  const int64_t blocks = std::max<int64_t>(1, static_cast<int64_t>(sh.batch) * sh.kv_heads);
  const int64_t wanted = std::max<int64_t>(1, (2 * static_cast<int64_t>(sm_count) + blocks - 1) / blocks);
  int64_t chunk = (sh.context + wanted - 1) / wanted;
  const int64_t most = std::max<int64_t>(32, kScoreFloats / group / 32 * 32);
  chunk = std::min(most, std::max(kLeastChunk, (chunk + 31) / 32 * 32));
  FlashDecodingSplit split;
  split.chunk = static_cast<int>(chunk);
  split.splits = static_cast<int>(std::min<int64_t>(std::numeric_limits<int>::max(), (sh.context + chunk - 1) / chunk));
  return split;
}

bool flash_decoding_supports(const FlashDecodingShape& sh) {
  return (sh.head_dim == 64 || sh.head_dim == 128) && sh.kv_heads > 0 && sh.heads % sh.kv_heads == 0 && sh.context > 0 &&
         sh.context <= sh.cache_len;
}

FlashDecodingWork flash_decoding_work(const FlashDecodingShape& sh, int sm_count) {
  FlashDecodingWork w;
  if (sh.batch <= 0 || sh.heads <= 0 || sh.kv_heads <= 0 || sh.context <= 0) return w;
  const double cache = 2.0 * sh.batch * sh.kv_heads * static_cast<double>(sh.context) * sh.head_dim * 2;  // fp16 K and V
  w.bytes = cache + 2.0 * sh.batch * sh.heads * sh.head_dim * 2;  // the queries in, the outputs out
  if (sm_count <= 0) return w;  // no SMs to count waves over: the bytes alone
  const FlashDecodingSplit split = plan_flash_decoding(sh, sm_count);
  const double blocks = static_cast<double>(sh.batch) * sh.kv_heads * split.splits;
  const double slots = static_cast<double>(flash_decoding_resident_blocks(sh.head_dim)) * sm_count;
  const double group = static_cast<double>(sh.heads) / sh.kv_heads;
  const double rows = static_cast<double>(std::min<int64_t>(split.chunk, sh.context));
  w.waves = std::ceil(blocks / slots);
  w.k = 1000 * w.waves;
  w.flops = w.waves * slots * 4 * sh.head_dim * group * rows;
  return w;
}

}  // namespace modelcost
