// Decoder-LLM serving plan: what the ONNX graph says about the model (token input, KV cache,
// heads, layers, weight GEMMs), then prefill and decode on a device, the KV cache, tokens per
// second, concurrency and tensor parallelism. Method in docs/llm.md.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/hardware.h"

namespace modelcost {

// One matrix product with a stored weight (MatMul, Gemm, MatMulNBits, quantized forms).
struct WeightGemm {
  std::string node;
  std::string op_type;
  int64_t k = 0, n = 0;        // weight [K, N]: K inputs, N outputs per row
  double stored_bytes = 0;     // the weight as stored (packed int4 blocks, scales and zero points included)
  std::string stored_dtype;    // "fp32", "fp16", "int4", "int8", ...
  bool lm_head = false;        // N is the vocabulary: the output projection
  bool per_position = true;    // runs on every position of the sequence (false: last position only)
  // Routed experts (mixture of experts, from a config.json): `experts` matrices of this shape, of
  // which each token runs `experts_per_token`; stored_bytes covers all of them. 1 and 0 otherwise.
  int64_t experts = 1;
  int64_t experts_per_token = 0;
  bool routed() const { return experts_per_token > 0; }
};

// Mixture of experts in the decoder's layers (config.json): routed experts chosen top-k per token
// by a router product, and shared experts every token runs. All 0 for a dense model.
struct ExpertLayers {
  int64_t routed = 0;          // experts per MoE layer
  int64_t per_token = 0;       // top-k
  int64_t width = 0;           // one routed expert's MLP width
  int64_t shared_width = 0;    // the shared experts' MLP width together (0: none)
  int64_t moe_layers = 0;      // layers with experts (the others have a dense MLP)
};

// The deployed step runs the routed experts' products as one grouped kernel over the experts a
// step's tokens reach, each expert's pairs (token, expert) in tiles of this many rows: 16 for a
// decode's few pairs per expert, 64 or 128 for a prefill's many. The prediction prices the tiles.
inline int64_t expert_tile_rows(double pairs_per_expert) { return pairs_per_expert <= 16 ? 16 : pairs_per_expert <= 64 ? 64 : 128; }

// The routing's work (top-k, then one block sorting the pairs by expert): the sort's passes over
// the pairs, counted as bytes so the expert_routing curve prices it.
inline constexpr double kRoutingBytesPerPair = 16;
inline double expert_routing_bytes(double pairs) { return kRoutingBytesPerPair * pairs; }

// The grouped product's work as its blocks run it: `experts` experts of `pairs_per_expert` rows
// each against n x k weights. The 64- and 128-row tiles are blocks of 256 columns, one per
// multiprocessor at a time, so their FLOPs count in whole waves over the `multiprocessors`; the
// 16-row tiles (blocks of 64 columns, several per multiprocessor) in whole tiles only.
inline double expert_product_flops(double experts, double pairs_per_expert, double n, double k, double multiprocessors) {
  const double tile = static_cast<double>(expert_tile_rows(pairs_per_expert));
  const double tiles = experts * std::ceil(std::max(1.0, pairs_per_expert) / tile);
  const double block_flops = 2 * tile * 256 * k;
  if (tile < 64 || multiprocessors <= 0) return 2 * tiles * tile * n * k;
  const double blocks = tiles * std::ceil(n / 256);
  return std::ceil(blocks / multiprocessors) * multiprocessors * block_flops;
}

// Multi-head latent attention (DeepSeek-V2/V3): keys and values are cached as one compressed
// latent of kv_lora_rank elements plus a rotary key of rope_head_dim shared by every head.
struct LatentAttention {
  int64_t kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0, nope_head_dim = 0, v_head_dim = 0;
  bool present() const { return kv_lora_rank > 0; }
};

// One KV-cache tensor pair of a layer: the graph input (past) and output (present).
struct KvCacheTensor {
  std::string past;     // "past_key_values.0.key"
  std::string present;  // "present.0.key" ("" when the graph has no matching output)
};

// What the graph says about the decoder.
struct DecoderModel {
  std::string source = "onnx";   // "onnx" (recognised in a graph) | "config.json" (a Hugging Face model description)
  std::string architecture;      // config.json's model_type ("llama", "mixtral", ...); "" for a graph
  std::string token_input;       // "input_ids"
  std::string batch_symbol;      // symbolic dim names ("" when the file fixes the dim)
  std::string sequence_symbol;
  std::string past_symbol;
  int64_t fixed_batch = 0;       // the file's value when it fixes the dim, else 0
  int64_t fixed_sequence = 0;
  int64_t fixed_past = 0;        // a static cache's length; 0 when symbolic or absent
  int64_t layers = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t hidden = 0, vocab = 0;
  std::string attention;         // "MHA" | "GQA" | "MQA"
  std::string attention_form;    // "Softmax + MatMul", "GroupQueryAttention", ...
  bool rotary = false;           // rotary position embedding (Sin/Cos tables or a rotary op)
  int64_t max_positions = 0;     // rows of a learned position table or rotary cache; 0 = no limit in the graph
  bool logits_every_position = true;  // the LM head runs on every position (false: the last only)
  std::vector<KvCacheTensor> kv_cache;  // empty: the export has no cache
  std::string kv_dtype;          // the cache's dtype as exported ("fp16"); the activation dtype without a cache
  std::string act_dtype;         // dtype of the hidden states ("fp32", "fp16")
  std::vector<WeightGemm> gemms; // in graph order
  double gemm_weight_bytes = 0;  // stored, every weight GEMM
  double other_weight_bytes = 0; // stored, embeddings, norms, biases (float initializers outside GEMMs)
  double other_weight_elements = 0;
  // The deployed view of the graph (the fusion stage's kernels): kernels per step, and the bytes
  // its non-matrix, non-attention kernels move per token (at act_dtype). 0 when not known.
  double deployed_kernels = 0;
  double elementwise_bytes_per_token = 0;
  // The MLP read off the layers' GEMMs: the down projection's K, and whether a gate and an up
  // projection (or one fused of twice the width) feed it. 0 when the GEMMs do not show one; then
  // the decode step is priced from the graph's GEMMs and its deployed view instead of the
  // deployed decode step of docs/llm.md.
  int64_t mlp_intermediate = 0;
  bool gated_mlp = false;
  // Sliding-window attention (config.json): `window_layers` of the layers attend to, and cache,
  // only the last `sliding_window` positions. 0 = every layer attends to the whole context.
  int64_t sliding_window = 0, window_layers = 0;
  ExpertLayers experts;          // mixture of experts (config.json); routed == 0 for a dense model
  LatentAttention latent;        // MLA (config.json); kv_lora_rank == 0 otherwise
  bool decode_derived = false;   // no cache in the graph: the decode step is derived (see `how`)
  std::vector<std::string> how;  // how each figure was found, one line each
};

// Parameters of the decoder: every weight element, and those one token's forward pass uses (the
// routed experts it is not sent to left out; the embedding table counted whole, as model cards do).
struct ParameterCount {
  double total = 0, active_per_token = 0;
};
ParameterCount count_parameters(const DecoderModel& model);

// KV-cache elements per token of one layer with `kv_heads` heads: key and value (2 x kv_heads x
// head_dim), or MLA's latent and rotary key (shared by the heads, so not split by tensor parallelism).
double kv_elements_per_token_per_layer(const DecoderModel& model, int64_t kv_heads);

// Cached positions per layer, averaged over the layers, at `context` positions: the context, or
// less where sliding-window layers keep only their window.
double cached_positions(const DecoderModel& model, double context);

// Distinct experts a batch of `tokens` tokens touches in expectation when each picks `per_token`
// of `experts` uniformly: E (1 - (1 - k/E)^tokens) (docs/llm.md, "Mixture of experts").
double expected_experts_touched(double experts, double per_token, double tokens);

// A Hugging Face config.json (docs/llm.md, "From a config.json"): the decoder it describes, every
// weight GEMM with its exact shape, at the config's torch_dtype. Throws Error(kExitUnreadable) for
// a file that cannot be read, Error(kExitInvalidModel) naming the missing or unknown field.
DecoderModel decoder_from_config(const std::string& path);
// True when `path` reads as a JSON object with a "model_type" or "architectures" member (a
// config.json rather than an ONNX file); false for anything else, never throws.
bool is_model_config(const std::string& path);
// True when the file's first non-space byte is '{': JSON (an ONNX protobuf starts with a field tag).
bool looks_like_json(const std::string& path);
// One line for the main command: what the config describes and how to plan it.
std::string describe_model_config(const std::string& path);

// Graph shapes for recognition: the probe values given to symbolic dims.
struct RecognitionProbe {
  int64_t sequence = 7;  // distinct small values keep the dims apart in the shapes
  int64_t past = 5;
};

// Reads the decoder's structure off a shaped analysis (run at probe_dims' values).
// Throws Error(kExitInvalidModel) "not a decoder LLM: ..." naming what was not found.
DecoderModel recognise_decoder(const Analysis& analysis);

// Symbolic dims of the token and cache inputs, and their probe values, for the shape engine.
// Keys are dim names; names already in `given` keep their value.
std::vector<std::pair<std::string, int64_t>> probe_dims(const Model& model, const RecognitionProbe& probe);

// Bytes per element of a precision name: fp32 4, fp16/bf16 2, fp8/int8 1, int4 0.5.
double precision_bytes(const std::string& dtype);

struct Precision {
  std::string weights;      // "" = as stored; fp16 bf16 fp32 fp8 int8 int4
  std::string activations;  // "" = the graph's; fp16 bf16 fp32 fp8 int8
  std::string kv_cache;     // "" = the cache's (or the activations'); fp16 bf16 fp32 fp8 int8
};

enum class Collective { kRing, kTree, kBest };

// One serving iteration to price (and with --measure to run): `prefills` chunks of `chunk` new
// tokens each after `past` cached positions, beside `decodes` sequences decoding at `context`
// (`--iteration PxCHUNK@PAST+D@CONTEXT`), as a continuously batching server mixes them.
struct IterationMix {
  int64_t prefills = 0, chunk = 0, past = 0, decodes = 0, context = 0;
  std::string label() const;  // "1x512@0+32@1024"
};
// Parses PxCHUNK@PAST, D@CONTEXT or both joined by '+'; throws Error(kExitUsage) with the reason.
IterationMix parse_iteration_mix(const std::string& text);

struct LlmOptions {
  int64_t prompt = 512;
  int64_t generate = 256;
  int64_t prefill_chunk = 0;      // chunked prefill: the prompt in steps of this many tokens (0: one step)
  std::vector<int64_t> batches = {1};
  std::vector<int64_t> contexts;  // decode contexts; empty = prompt + generate
  Precision precision;
  int64_t tensor_parallel = 1;
  int64_t expert_parallel = 1;    // routed experts spread over this many devices (a multiple of tensor_parallel)
  std::string link;               // "nvlink" | "pcie" | "" (nvlink when the device has it)
  Collective collective = Collective::kBest;
  double workspace_bytes = 0.5e9;
  std::optional<double> tpot_slo_ms;
  std::optional<double> ttft_slo_ms;
  std::optional<double> target_tokens_per_s;
  std::vector<IterationMix> iterations;  // --iteration: serving iterations to price
};

// A phase's predicted time on one device of the tensor-parallel group, by part.
// The predicted time of the kernels of one role of the deployed step ("QKV product", ...).
struct KernelRoleTime {
  std::string role;
  double kernels = 0, ms = 0;
};

struct StepTime {
  double gemm_ms = 0, attention_ms = 0, elementwise_ms = 0, launch_ms = 0, communication_ms = 0;
  double kernels = 0;
  std::vector<KernelRoleTime> by_role;  // the deployed step only: its kernels by role, launch order
  double total_ms() const { return gemm_ms + attention_ms + elementwise_ms + launch_ms + communication_ms; }
  // Adds another step's parts, kernels and roles (the chunks of a chunked prefill).
  StepTime& operator+=(const StepTime& other);
  StepTime scaled(double times) const;
};

struct MemoryPerDevice {
  double weights_bytes = 0, kv_bytes = 0, activation_bytes = 0, workspace_bytes = 0;
  double total() const { return weights_bytes + kv_bytes + activation_bytes + workspace_bytes; }
};

// One batch at one decode context.
struct LlmContextRow {
  int64_t context = 0;
  double tpot_ms = 0;
  StepTime decode;
  double tokens_per_s_per_sequence = 0;
  double tokens_per_s_per_device = 0;  // batch tokens per step over the group's devices
  double kv_bytes = 0;                 // whole batch, all devices
  MemoryPerDevice memory;              // per device at this context
  bool fits = true;
  bool beyond_graph = false;           // past the graph's fixed cache or position table
};

struct LlmBatchRow {
  int64_t batch = 0;
  double ttft_ms = 0;
  StepTime prefill;
  double mean_tpot_ms = 0;             // over the generated tokens (contexts prompt+1 .. prompt+generate)
  double tokens_per_s_per_sequence = 0;
  double tokens_per_s_per_device = 0;
  MemoryPerDevice memory;              // per device at the full context (prompt + generate)
  bool fits = true;
  bool meets_slo = true;
  std::vector<LlmContextRow> contexts;
};

// A step run on this machine's GPU (`modelcost llm --measure`) beside its prediction.
struct LlmIterationRow {
  IterationMix mix;
  StepTime step;  // the deployed step of the mix
};

struct LlmMeasuredStep {
  std::string phase;        // "prefill" | "decode" | "iteration"
  std::string label;        // an iteration's mix (IterationMix::label)
  std::string form;         // "graph as exported" (the ONNX graph node by node) | "deployed step" (docs/llm.md)
  int64_t batch = 0;
  int64_t tokens = 0;       // prompt length (prefill) or context (decode)
  int64_t tensor_parallel = 1;
  bool measured = false;
  std::string reason;       // why not, when not measured
  double measured_ms = 0;   // median of CUDA-graph replays
  double low_ms = 0, high_ms = 0;  // 10th and 90th percentile of the replays (deployed step)
  int64_t kernels = 0, predicted_kernels = 0;  // kernels of the measured CUDA graph and of the prediction (deployed step)
  std::string implementation;  // how the deployed step ran (attention split, GEMM algorithms)
  double kernel_busy_ms = 0;   // one replay's kernels summed (CUPTI), and their time by kind
  std::string kernel_breakdown;
  double predicted_ms = 0;
  // The deployed step's kernels by role, measured beside predicted (launch order).
  struct RoleComparison {
    std::string role;
    int64_t kernels = 0;
    double measured_ms = 0, predicted_kernels = 0, predicted_ms = 0;
    double alone_ms = 0;  // a collective's own time (the wait for the slowest GPU left out); 0 otherwise
  };
  std::vector<RoleComparison> by_role;
};

struct LlmPlan {
  const Device* device = nullptr;
  DecoderModel model;
  LlmOptions options;
  std::string weights_dtype, act_dtype, kv_dtype, compute_dtype;  // after defaults
  double weights_bytes = 0;            // whole model at the weights precision (as stored by default)
  ParameterCount parameters;
  int64_t devices = 1;                 // devices of one replica: max(tensor_parallel, expert_parallel)
  double kv_bytes_per_token = 0;       // 2 x layers x kv_heads x head_dim x bytes(kv)
  double kv_bytes_full_context = 0;    // per sequence at prompt + generate
  double peak_activation_bytes = 0;    // per device, prefill of the largest batch
  std::string link;                    // interconnect used with tensor_parallel > 1
  double allreduce_bus_gbps = 0, allreduce_latency_us = 0;
  std::vector<LlmBatchRow> rows;
  std::vector<LlmIterationRow> iterations;  // --iteration, in the order given
  std::optional<int64_t> max_sequences;  // most concurrent sequences at full context
  std::optional<int64_t> best_batch;     // highest tokens/s per device under the SLOs
  std::optional<int64_t> devices_needed; // for target_tokens_per_s
  std::vector<std::string> notes;
  std::vector<LlmMeasuredStep> measured;  // with --measure
};

// Kernels of the deployed decode step on each device: per layer two norms, the QKV product, rotary
// and cache append, the attention's chunks and merge, the output product, the gate/up product, the
// activation and the down product; then the embedding, the final norm and the LM head; with
// tensor parallelism an all-reduce after the output and down products and a gather of the logits.
// A MoE layer (docs/llm.md, "Mixture of experts") runs its router, routing, experts and combine
// (and shared experts) instead of the MLP, and with expert parallelism two all-to-alls.
int64_t deployed_decode_kernels(const DecoderModel& model, int64_t tensor_parallel, int64_t expert_parallel = 1);
// The kernels of a deployed step with decodes, prefill chunks or both: a prefill's attention is one
// kernel (not two), a step with prefill chunks gathers each sequence's last position before the
// final norm, and a mixed step runs both attentions and two rotary kernels per layer.
struct StepKernelsOf {
  bool decodes = true, prefills = false;
  int64_t tensor_parallel = 1, expert_parallel = 1;
};
int64_t deployed_step_kernels(const DecoderModel& model, const StepKernelsOf& of);

// `--measure` of a model too large for the GPU: the deployed decode step's fp16 bytes on one
// device at `layers` layers (weights, KV cache of batch x context, embedding and LM head); the
// depths to run it at with `free_bytes` of device memory ({layers} when it fits, else the deepest
// that fits and half of it, {} when two layers do not); and a value measured at two depths
// extrapolated linearly in the layers to `full`.
double deployed_step_device_bytes(const DecoderModel& model, int64_t layers, int64_t batch, int64_t context, int64_t tp);
std::vector<int64_t> measurable_depths(const DecoderModel& model, int64_t batch, int64_t context, int64_t tp, double free_bytes);
double extrapolate_to_depth(int64_t full, int64_t deep, double deep_value, int64_t shallow, double shallow_value);

// Throws Error(kExitUsage) for bad options (prompt < 1, a context below 1, TP not dividing the heads).
LlmPlan plan_llm(const DecoderModel& model, const Device& device, const LlmOptions& options);

// Time of one all-reduce of `bytes` over `ranks` devices: ring 2(n-1) steps of latency plus
// 2(n-1)/n x bytes / bus bandwidth; tree 2 log2(n) steps plus 2 x bytes / bandwidth; best = the lower.
double allreduce_ms(double bytes, int64_t ranks, double bus_gbps, double latency_us, Collective collective);

}  // namespace modelcost
