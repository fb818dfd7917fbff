// What one kernel of the deployed runtime can run, read by the kernel plan (which plans a match
// past these limits as several kernels) and by the runtime's kernels themselves, so the two agree.
// No dependencies: the runtime's CUDA sources include it.
#pragma once
#include <cstdint>

namespace modelcost {

// The head sizes the deployed runtime's flash-attention kernel runs: multiples of 4 up to 128 (its
// copies move 4 or 8 halves). It is built for 32, 64 and 128; a head size between runs the next
// one's kernel with the columns past it zero-filled, and is priced at that padded size. An
// attention match with another head size is planned, and run, as its members.
constexpr bool flash_attention_head_size(int64_t d) { return d > 0 && d <= 128 && d % 4 == 0; }
constexpr int64_t flash_attention_padded_head_size(int64_t d) { return d <= 32 ? 32 : d <= 64 ? 64 : 128; }
// Wider query/key heads the kernel also runs, as its 192 build: multiples of 4 above 128 up to 192
// (DeepSeek MLA's 128 + 64 rotary columns, values 128 wide). Only the LLM step's MLA prefill
// launches these; the functions above, and so the plans of ONNX graphs, leave them out.
constexpr bool flash_attention_wide_head_size(int64_t d) { return d > 128 && d <= 192 && d % 4 == 0; }

// The deployed runtime's generated pointwise chain: one kernel takes at most this many steps,
// external inputs (broadcast ones included), stored results and iteration dims; a longer run of
// elementwise work is planned as several chains.
struct ChainLimits {
  int steps = 24, inputs = 8, outputs = 4, rank = 8;
};
constexpr ChainLimits kChainLimits{};

}  // namespace modelcost
