// `modelcost llm --measure`: runs the decoder graph itself on this machine's GPU, shaped as the
// prefill (sequence = prompt, past 0) and as a decode step at each context (sequence 1, a KV cache
// of context - 1 positions filled with random data), then the deployed step (the CUDA module's
// fused step with the recognised shapes, sharded over --tp GPUs): each --iteration, and at each
// batch the prefill and a decode step per context; and puts the medians beside the plan's
// predictions (docs/llm.md, "Measuring").
#pragma once
#include <string>
#include <vector>

#include "modelcost/llm.h"
#include "modelcost/measure.h"

namespace modelcost {

struct LlmMeasureRequest {
  std::string model_path;
  std::vector<std::pair<std::string, int64_t>> user_dims;  // --dim, applied after the phase's dims
  std::string dtype;                                       // the activations' precision (fp32, fp16, bf16)
};

// One entry per phase and context; a phase the graph cannot run (no cache, fixed sequence) is
// listed with the reason. The exported graph runs at the first batch of the plan (without --tp),
// the deployed step at every batch.
std::vector<LlmMeasuredStep> measure_llm_steps(const LlmMeasureRequest& request, const LlmPlan& plan, Backend& backend);

}  // namespace modelcost
