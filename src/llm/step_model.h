// Predicted time and memory of one forward step of a decoder on one device of a tensor-parallel
// group: weight GEMMs and flash attention on the roofline, fused elementwise work, kernel
// launches and all-reduces (docs/llm.md, "Prefill and decode").
#pragma once
#include <memory>

#include "modelcost/llm.h"

namespace modelcost {

// Precisions and device figures after the options' defaults are applied.
struct StepSetup {
  const DecoderModel* model = nullptr;
  const Device* device = nullptr;
  std::string weights, act, kv, compute;  // precision names
  double act_bytes = 2, kv_bytes = 2;
  PeakChoice gemm_peak, attention_peak;
  double bandwidth = 0;                   // bytes/s
  int64_t tp = 1;
  int64_t ep = 1;                         // expert parallelism: routed experts whole on each of ep devices
  int64_t devices = 1;                    // of one replica: max(tp, ep)
  double attention_replicas = 1;          // ep / tp: each runs attention and the dense parts on its share of the batch
  double link_gbps = 0, link_latency_us = 0;  // per GPU and direction: the experts' all-to-all, pipeline stages' sends
  int64_t kv_heads_per_device = 0;        // at least 1: kv heads are replicated when fewer than tp
  double heads_per_device = 0;
  double allreduce_gbps = 0, allreduce_latency_us = 0;
  // The figures are calibrate's, timed inside a CUDA graph: an all-reduce's launch and the gap
  // after it are in them already.
  bool allreduce_calibrated = false;
  // With a calibrated entry, its all-reduce times at the sizes calibrate timed over the GPU count
  // nearest tp (empty otherwise).
  AllReduceCurve allreduce_curve;
  Collective collective = Collective::kBest;
};

// One all-reduce of `bytes` over the setup's tp devices (ms): the calibrated curve where there is
// one, carried to tp devices by the ring/tree model's ratio; else the model (collective.cpp).
double step_allreduce_ms(const StepSetup& setup, double bytes);

// Resolves precisions and checks the tensor-parallel split (throws Error(kExitUsage)).
StepSetup make_step_setup(const DecoderModel& model, const Device& device, const LlmOptions& options);

// One weight GEMM's weight bytes at the setup's weights precision (as stored when none is given).
double gemm_weight_bytes(const StepSetup& setup, const WeightGemm& gemm);
// Whole-model weight bytes at the setup's precisions (all devices together).
double model_weight_bytes(const StepSetup& setup);
// KV cache bytes per token and sequence on one device (all layers, key and value).
double kv_bytes_per_token_per_device(const StepSetup& setup);

// `batch` sequences each adding `new_tokens` positions after `past` cached ones.
StepTime predict_step(const StepSetup& setup, int64_t batch, int64_t new_tokens, int64_t past);

// Query-key pairs of one layer, averaged over the layers: each of q new positions attends to the p
// cached ones and to the new ones up to itself, or to at most the window in a sliding layer.
double attended_pairs(const DecoderModel& model, double q, double p);

// The sequences of one deployed step, summed as its kernels see them: every sequence's new tokens
// are rows of the same products; the prefill chunks share one causal attention kernel, the
// decodes one flash-decoding kernel (docs/llm.md, "The deployed step").
struct StepMix {
  double decodes = 0, decode_positions = 0;  // decoding sequences, their contexts summed
  double prefills = 0, prefill_tokens = 0;   // prefill chunks, their new tokens summed
  double prefill_keys = 0;                   // summed over the chunks: past + chunk (keys read)
  double prefill_pairs = 0;                  // query-key pairs scored: chunk past + chunk (chunk + 1) / 2
  double longest_keys = 0;                   // the longest chunk's past + chunk (its blocks' key loop)
  void add_decode(int64_t context);
  void add_prefill(int64_t chunk, int64_t past);
  double rows() const { return decodes + prefill_tokens; }
  // `decodes` sequences at `context` and `prefills` chunks of `chunk` after `past`.
  static StepMix uniform(int64_t decodes, int64_t context, int64_t prefills, int64_t chunk, int64_t past);
};

// The deployed step (docs/llm.md, "The deployed step"), for a model whose MLP was read
// (mlp_intermediate > 0): each of its kernels priced on its class's calibrated curve, or as
// max(FLOPs / achievable peak, bytes / achievable bandwidth) plus the kernel overhead and gap.
StepTime predict_deployed_step(const StepSetup& setup, const StepMix& mix);
// The same for callers that price many steps (the serving simulator's iterations): the device's
// curves and the model's widths looked up once.
class DeployedStepModel {
 public:
  explicit DeployedStepModel(const StepSetup& setup);
  ~DeployedStepModel();
  DeployedStepModel(DeployedStepModel&&) noexcept;
  // by_role false: the parts and the total only, no list of roles.
  StepTime price(const StepMix& mix, bool by_role = true) const;
  // The step in the pieces a pipeline stage holds: what runs before the layers (the embedding),
  // one dense layer, one mixture-of-experts layer, and what runs after them (the last positions,
  // the final norm, the LM head and its gather). No roles.
  struct Pieces {
    StepTime before, dense_layer, moe_layer, after;
  };
  Pieces pieces(const StepMix& mix) const;

 private:
  struct Prices;
  std::unique_ptr<const Prices> prices_;
};
// The same for a decode step of `batch` sequences at `context`.
StepTime predict_deployed_decode(const StepSetup& setup, int64_t batch, int64_t context);
// The fixed cost of each of its kernels, us: the achievable kernel overhead (launch_overhead_us
// where the entry has none) plus the inter-kernel gap.
double deployed_fixed_us(const Device& device);

// FLOPs and bytes of one product on one device.
struct GemmWork {
  double flops = 0, bytes = 0;
};
// A routed-expert GEMM over `tokens` tokens of the whole group: the top-k share of the FLOPs, the
// weights of the experts the batch touches (expected_experts_touched), split over the devices.
GemmWork routed_gemm_work(const StepSetup& setup, const WeightGemm& gemm, double tokens);
// The routed experts' weights held by one device.
double routed_weight_bytes_per_device(const StepSetup& setup);
// Expert parallelism: the dispatch and combine all-to-all of one MoE layer for `tokens` tokens.
double expert_all_to_all_ms(const StepSetup& setup, double tokens);

// Memory of one device while `batch` sequences hold `context` tokens of cache, with activations
// of a prefill of `prefill_tokens` positions per sequence.
MemoryPerDevice memory_per_device(const StepSetup& setup, int64_t batch, int64_t context, int64_t prefill_tokens,
                                  double workspace_bytes);

}  // namespace modelcost
