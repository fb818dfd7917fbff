// Names of the deployed step's kernel roles (serving_step_kernel_roles in measure.h): the
// CUDA module labels the step's kernels with them, the report matches them to the prediction's.
#pragma once

namespace modelcost::step_role {

inline constexpr const char* kEmbedding = "embedding";
inline constexpr const char* kNorm = "RMSNorm";
inline constexpr const char* kQkv = "QKV product";
inline constexpr const char* kRotary = "rotary + KV append";
// Multi-head latent attention's own: the queries' second low-rank product; a prefill's keys and
// values up-projected from the cached latent and laid out for attention; a decode's queries taken
// into the latent and its outputs out of it (the absorbed form).
inline constexpr const char* kQueryUp = "query up product";
inline constexpr const char* kLatentUp = "latent up product";
inline constexpr const char* kKvExpand = "K/V expansion";
inline constexpr const char* kQueryAbsorb = "query absorb product";
inline constexpr const char* kValueUp = "value up product";
inline constexpr const char* kAttention = "attention";
inline constexpr const char* kPrefillAttention = "prefill attention";
inline constexpr const char* kOutput = "output product";
inline constexpr const char* kAllReduce = "all-reduce";
inline constexpr const char* kGateUp = "gate/up product";
inline constexpr const char* kActivation = "MLP activation";
inline constexpr const char* kDown = "down product";
// A mixture of experts' layer, instead of the three above.
inline constexpr const char* kRouter = "router product";
inline constexpr const char* kRouting = "routing";  // top-k, then the pairs sorted by expert
inline constexpr const char* kExpertGateUp = "expert gate/up product";
inline constexpr const char* kExpertActivation = "expert activation";
inline constexpr const char* kExpertDown = "expert down product";
inline constexpr const char* kExpertCombine = "expert combine";
inline constexpr const char* kSharedGateUp = "shared gate/up product";
inline constexpr const char* kSharedActivation = "shared activation";
inline constexpr const char* kSharedDown = "shared down product";
inline constexpr const char* kLastPositions = "last positions";
inline constexpr const char* kLmHead = "LM head";
inline constexpr const char* kGather = "logits gather";

}  // namespace modelcost::step_role
