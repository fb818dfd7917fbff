// The decode attention kernel's plan (flash-decoding), shared by the runtime that launches it
// (measure/cuda/llm/flash_decoding.cu) and the prediction that prices it (llm/deployed_step.cpp):
// the cached context split into chunks, one block per (sequence, kv head, chunk), and the waves
// those blocks run in over the SMs. docs/llm.md, "The deployed step", says how it is priced.
#pragma once
#include <cstdint>

namespace modelcost {

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

// Chunk blocks resident on one SM at once: the kernel's launch bounds hold its registers to this
// (its registers, not its shared memory, bound the residency); a GPU test checks it.
constexpr int flash_decoding_resident_blocks(int head_dim) { return head_dim == 64 ? 3 : 2; }

// What the chunk kernel's time depends on. A block's scoring and weighting of its chunk is a chain
// of dependent steps, so a wave of blocks takes as long however few of its slots are busy: `flops`
// counts every slot of every wave as a full chunk's work. `bytes` (K and V read once, the queries
// and outputs) is what the memory system streams.
struct FlashDecodingWork {
  double waves = 0;  // the blocks over (resident blocks x SMs), rounded up
  // The curve's K (KernelCurve::latency_us): 1000 per wave, so its k_us_per_1000 is the time of a
  // wave's fixed steps (loading the queries, the softmax, the cross-warp sums).
  double k = 0;
  double flops = 0;  // 4 x head_dim x query heads per block x chunk, over the waves' slots
  double bytes = 0;
};
FlashDecodingWork flash_decoding_work(const FlashDecodingShape& shape, int sm_count);

}  // namespace modelcost
