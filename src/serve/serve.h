// Serving simulation: a discrete-event model of a serving engine (static, continuous and chunked
// batching over a paged KV cache), each iteration priced by the LLM step model (docs/llm.md,
// "Serving simulation").
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "llm/step_model.h"
#include "modelcost/llm.h"

namespace modelcost {

struct ServeRequest {
  double arrival_s = 0;
  int64_t prompt = 1, output = 1;  // tokens
};

// Inclusive range of lengths; low == high for a fixed length.
struct LengthRange {
  int64_t low = 512, high = 512;
};

struct WorkloadOptions {
  double rate = 1;          // requests per second (Poisson)
  int64_t requests = 200;
  LengthRange prompt, output{128, 128};
  uint64_t seed = 1;
};

// Bounds on what one simulation may do (refused with Error(kExitUsage) past them).
constexpr int64_t kMaxServeRequests = 1000000;
constexpr int64_t kMaxServeIterations = 20000000;

// Poisson arrivals with lengths drawn uniformly in their ranges; deterministic for a seed.
std::vector<ServeRequest> poisson_workload(const WorkloadOptions& options);
// A trace: CSV (header arrival_s,prompt_len,output_len) or JSONL (one object with those keys per
// line). Throws Error(kExitUnreadable / kExitUsage) naming the line.
std::vector<ServeRequest> read_trace(const std::string& path);

enum class SchedulerKind { kStatic, kContinuous, kChunked };
SchedulerKind parse_scheduler(const std::string& name);  // throws Error(kExitUsage)
std::string scheduler_name(SchedulerKind kind);

struct SchedulerOptions {
  SchedulerKind kind = SchedulerKind::kContinuous;
  int64_t max_batch = 256;       // sequences in one iteration
  int64_t chunk = 512;           // chunked: token budget of an iteration
  int64_t block_tokens = 16;     // paged KV block
  int64_t kv_blocks = 0;         // 0: from the device memory (kv_block_budget)
  double reserve_bytes = 0.5e9;  // per device, for the runtime
  int64_t max_iterations = kMaxServeIterations;
  // Pipeline parallelism: the layers split over this many stages (each a tensor-parallel group),
  // with as many batches in flight, one per virtual engine (vLLM's scheme); docs/llm.md says how
  // an iteration and the KV cache are priced.
  int64_t pipeline_stages = 1;
};

// Pipeline stage boundaries that fall between nodes (the device's node_gpus figure; 0 without one).
int64_t stage_boundaries_between_nodes(const StepSetup& setup, int64_t stages);
// The layers of each pipeline stage, as vLLM splits them (get_pp_indices): as even as they go, the
// remainder one each to the stages before the last, which also runs the final norm and LM head.
std::vector<int64_t> pipeline_layer_split(int64_t layers, int64_t stages);

// KV blocks that fit one device beside the weights, the reserve and the activations of an
// iteration of `iteration_tokens` tokens; with pipeline stages, the blocks of one virtual engine
// (each device holds 1/stages of the weights and of every sequence's cache, for stages engines).
int64_t kv_block_budget(const StepSetup& setup, const SchedulerOptions& options, int64_t iteration_tokens);

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};

struct RequestOutcome {
  ServeRequest request;
  double first_token_s = 0, finish_s = 0;
  int64_t preemptions = 0;
  double ttft_ms() const { return (first_token_s - request.arrival_s) * 1e3; }
  double latency_ms() const { return (finish_s - request.arrival_s) * 1e3; }
  // Mean time between output tokens after the first (0 for a single token).
  double tpot_ms() const {
    return request.output > 1 ? (finish_s - first_token_s) * 1e3 / static_cast<double>(request.output - 1) : 0;
  }
};

struct ServeResult {
  std::vector<RequestOutcome> requests;  // in arrival order
  Percentiles ttft_ms, tpot_ms, latency_ms;
  double duration_s = 0;                 // first arrival to last finish
  double requests_per_s = 0, output_tokens_per_s = 0;
  double mean_in_flight = 0;             // time-averaged requests arrived and not finished
  double mean_kv_use = 0, peak_kv_use = 0;  // share of the KV blocks, time-averaged and highest
  int64_t kv_blocks = 0;
  int64_t iterations = 0, preemptions = 0;
  bool saturated = false;                // the queue still grew at the last arrival
  // Pipeline stages: the share of the span each stage was busy (the rest its bubbles).
  std::vector<double> stage_busy;
};

// Prices iterations with the step model: GEMMs, elementwise work, launches and collectives over
// all the iteration's new tokens as rows, the LM head over one row per sequence where the model
// takes the last position's logits, attention per sequence at its own context.
// With pipeline stages, an iteration passes every stage in turn, the hidden states sent between
// them (the simulator queues it behind the other engines' batches at each stage). A model whose
// MLP is known (the deployed step) is cut into its stages' pieces: each stage's layers
// (pipeline_layer_split), the embedding on the first, the final norm, LM head and gather on the
// last. Other models' steps are split evenly over the stages.
class IterationPricer {
 public:
  explicit IterationPricer(const StepSetup& setup, int64_t stages = 1)
      : setup_(setup), stages_(std::max<int64_t>(stages, 1)), stage_layers_(pipeline_layer_split(setup.model->layers, stages_)) {
    if (setup.model->mlp_intermediate > 0) deployed_.emplace(setup_);
  }
  struct Slice {
    int64_t new_tokens = 1, past = 0;
  };
  // The iteration alone: every stage's time and the sends between them.
  double iteration_ms(const std::vector<Slice>& slices);
  // Each stage's time for the iteration (one entry without pipeline stages), sends left out.
  std::vector<double> stage_ms(const std::vector<Slice>& slices);
  // The send of `rows` rows' hidden states after stage `boundary` to the next.
  double send_ms(int64_t rows, int64_t boundary) const;
  int64_t stages() const { return stages_; }
  const StepSetup& setup() const { return setup_; }

 private:
  double whole_step_ms(const std::vector<Slice>& slices);
  std::vector<double> deployed_stage_ms(const std::vector<Slice>& slices);
  double rows_ms(int64_t rows);
  double logits_ms(int64_t sequences);
  double attention_ms(const Slice& slice);
  StepSetup setup_;
  int64_t stages_ = 1;
  std::vector<int64_t> stage_layers_;  // pipeline_layer_split's
  std::optional<DeployedStepModel> deployed_;  // where the model's MLP is known
  // Memos: an iteration repeats the same rows and decode contexts many times.
  std::vector<double> rows_ms_;              // by rows; < 0 not yet priced
  std::vector<double> logits_ms_;            // by sequences
  std::vector<double> decode_attention_ms_;  // by past, one new token
  std::unordered_map<uint64_t, double> prefill_attention_ms_;
};

// Runs `requests` (sorted by arrival) through the scheduler. Throws Error(kExitUsage) past the
// bounds or when a request can never fit the KV cache.
ServeResult simulate_serving(const StepSetup& setup, const std::vector<ServeRequest>& requests,
                             const SchedulerOptions& options);

Percentiles percentiles_of(std::vector<double> values);

// The arrival rate of a workload: its requests after the first over the span of their arrivals
// (0 for fewer than two or all at once).
double offered_rate(const std::vector<ServeRequest>& requests);

struct RatePoint {
  double rate = 0;      // requests/s offered
  ServeResult result;   // without its per-request outcomes
};
// The simulation of `requests` with their arrivals `factor` times as dense, for each factor (the
// same lengths; a Poisson workload stays Poisson at factor times its rate). Throws
// Error(kExitUsage) where the workload has no rate to scale.
std::vector<RatePoint> simulate_rates(const StepSetup& setup, const std::vector<ServeRequest>& requests,
                                      const SchedulerOptions& options, const std::vector<double>& factors);

}  // namespace modelcost
