// The LLM serving plan: prefill and decode per batch and context, memory, concurrency, the best
// batch under SLOs and the devices for a target rate (docs/llm.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llm/step_model.h"
#include "modelcost/errors.h"

namespace modelcost {
namespace {

constexpr int64_t kMaxSequences = int64_t{1} << 20;

void check_options(const LlmOptions& o) {
  if (o.prompt < 1) throw Error(kExitUsage, "--prompt must be at least 1 token");
  if (o.generate < 1) throw Error(kExitUsage, "--generate must be at least 1 token");
  if (o.batches.empty()) throw Error(kExitUsage, "--batch needs at least one batch size");
  for (int64_t b : o.batches)
    if (b < 1) throw Error(kExitUsage, "--batch sizes must be positive");
  for (int64_t c : o.contexts)
    if (c < 1) throw Error(kExitUsage, "--context lengths must be positive");
  if (o.workspace_bytes < 0) throw Error(kExitUsage, "--workspace-gb cannot be negative");
}

bool fits(const Device& device, const MemoryPerDevice& m) {
  return device.memory_gb <= 0 || m.total() <= device.memory_bytes();
}

// The graph's own limit on positions: a static cache, a position table, a fixed sequence.
int64_t graph_context_limit(const DecoderModel& m) {
  int64_t limit = 0;
  if (m.fixed_past > 0) limit = m.fixed_past + std::max<int64_t>(1, m.fixed_sequence);
  if (m.max_positions > 0) limit = limit > 0 ? std::min(limit, m.max_positions) : m.max_positions;
  return limit;
}

// A decode step at `context` positions: the deployed step where the model's MLP is known.
StepTime decode_step(const StepSetup& s, int64_t batch, int64_t context) {
  if (s.model->mlp_intermediate > 0) return predict_deployed_decode(s, batch, context);
  return predict_step(s, batch, 1, context - 1);
}

// The prefill: the deployed step over the prompt where the model's MLP is known, in chunks of
// --prefill-chunk tokens each after the ones before it (a serving runtime's chunked prefill).
// Past 256 whole chunks, 256 evenly spaced ones are priced, each standing for its share (a
// chunk's time is linear in its past: no pair of samples misses a bend).
StepTime prefill_step(const StepSetup& s, const LlmOptions& o, int64_t batch) {
  if (s.model->mlp_intermediate <= 0) return predict_step(s, batch, o.prompt, 0);
  constexpr int64_t kMostChunks = 256;
  const int64_t chunk = o.prefill_chunk > 0 ? std::min(o.prefill_chunk, o.prompt) : o.prompt;
  const int64_t whole = o.prompt / chunk, rest = o.prompt % chunk, samples = std::min(whole, kMostChunks);
  StepTime total;
  for (int64_t i = 0; i < samples; ++i) {
    const int64_t index = samples == whole ? i : i * (whole - 1) / std::max<int64_t>(1, samples - 1);
    StepTime one = predict_deployed_step(s, StepMix::uniform(0, 0, batch, chunk, index * chunk));
    total += one.scaled(static_cast<double>(whole) / static_cast<double>(samples));
  }
  if (rest > 0) total += predict_deployed_step(s, StepMix::uniform(0, 0, batch, rest, whole * chunk));
  return total;
}

LlmContextRow context_row(const StepSetup& s, const LlmOptions& o, int64_t batch, int64_t context, int64_t limit) {
  LlmContextRow r;
  r.context = context;
  r.decode = decode_step(s, batch, context);
  r.tpot_ms = r.decode.total_ms();
  r.tokens_per_s_per_sequence = 1e3 / r.tpot_ms;
  r.tokens_per_s_per_device = r.tokens_per_s_per_sequence * static_cast<double>(batch) / static_cast<double>(s.devices);
  r.memory = memory_per_device(s, batch, context, o.prompt, o.workspace_bytes);
  r.kv_bytes = r.memory.kv_bytes * static_cast<double>(s.devices);
  r.fits = fits(*s.device, r.memory);
  r.beyond_graph = limit > 0 && context > limit;
  return r;
}

LlmBatchRow batch_row(const StepSetup& s, const LlmOptions& o, int64_t batch, int64_t limit) {
  LlmBatchRow r;
  r.batch = batch;
  r.prefill = prefill_step(s, o, batch);
  r.ttft_ms = r.prefill.total_ms();
  // Decode steps at contexts prompt+1 .. prompt+generate; at most 64 evenly spaced ones are priced
  // (the step time is piecewise linear in the context).
  const int64_t steps = std::min<int64_t>(o.generate, 64);
  double sum = 0;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t offset = steps == 1 ? o.generate : 1 + (o.generate - 1) * i / std::max<int64_t>(1, steps - 1);
    sum += decode_step(s, batch, o.prompt + offset).total_ms();
  }
  r.mean_tpot_ms = sum / static_cast<double>(steps);
  r.tokens_per_s_per_sequence = 1e3 / r.mean_tpot_ms;
  r.tokens_per_s_per_device = r.tokens_per_s_per_sequence * static_cast<double>(batch) / static_cast<double>(s.devices);
  r.memory = memory_per_device(s, batch, o.prompt + o.generate, o.prompt, o.workspace_bytes);
  r.fits = fits(*s.device, r.memory);
  r.meets_slo = (!o.tpot_slo_ms || r.mean_tpot_ms <= *o.tpot_slo_ms) && (!o.ttft_slo_ms || r.ttft_ms <= *o.ttft_slo_ms);
  for (int64_t c : o.contexts) r.contexts.push_back(context_row(s, o, batch, c, limit));
  return r;
}

// Largest batch whose memory fits at the full context (memory grows with the batch).
std::optional<int64_t> max_sequences(const StepSetup& s, const LlmOptions& o) {
  if (s.device->memory_gb <= 0) return std::nullopt;
  auto ok = [&](int64_t b) { return fits(*s.device, memory_per_device(s, b, o.prompt + o.generate, o.prompt, o.workspace_bytes)); };
  if (!ok(1)) return 0;
  int64_t lo = 1, hi = 2;
  while (hi < kMaxSequences && ok(hi)) lo = hi, hi *= 2;
  if (hi >= kMaxSequences && ok(kMaxSequences)) return kMaxSequences;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

void choose_best(const StepSetup& s, const LlmOptions& o, int64_t limit, LlmPlan& plan) {
  std::vector<LlmBatchRow> candidates = plan.rows;
  if (plan.max_sequences && *plan.max_sequences > 0) candidates.push_back(batch_row(s, o, *plan.max_sequences, limit));
  const LlmBatchRow* best = nullptr;
  for (const LlmBatchRow& r : candidates)
    if (r.fits && r.meets_slo && (!best || r.tokens_per_s_per_device > best->tokens_per_s_per_device)) best = &r;
  if (!best) {
    plan.notes.push_back("no batch fits in memory and meets the SLOs");
    return;
  }
  plan.best_batch = best->batch;
  if (o.target_tokens_per_s) {
    const double per_replica = best->tokens_per_s_per_device * static_cast<double>(s.devices);
    plan.devices_needed = static_cast<int64_t>(std::ceil(*o.target_tokens_per_s / per_replica)) * s.devices;
  }
}

double kv_bytes_per_token(const DecoderModel& m, double kv_element_bytes) {
  return static_cast<double>(m.layers) * kv_elements_per_token_per_layer(m, m.kv_heads) * kv_element_bytes;
}

// What the plan assumes of the experts: how many a decode step reads at each batch, and the all-to-all.
void add_expert_notes(const StepSetup& s, LlmPlan& plan) {
  const ExpertLayers& e = plan.model.experts;
  if (e.routed == 0) return;
  std::string touched;
  for (const LlmBatchRow& r : plan.rows)
    touched += fmt::format("{}batch {}: {:.1f}", touched.empty() ? "" : ", ", r.batch,
                           expected_experts_touched(static_cast<double>(e.routed), static_cast<double>(e.per_token),
                                                    static_cast<double>(r.batch)));
  plan.notes.push_back(fmt::format("mixture of experts: a decode step reads the weights of the distinct experts its tokens "
                                   "are routed to, E (1 - (1 - k/E)^tokens) of the {} per layer in expectation ({})",
                                   e.routed, touched));
  if (s.ep > 1)
    plan.notes.push_back(fmt::format("expert parallelism over {} devices: {} experts per device, attention and the dense "
                                     "layers split over {} device(s) in each of {} replica(s); an all-to-all dispatch and "
                                     "combine per MoE layer at {} GB/s, {} us per step", s.ep, e.routed / s.ep, s.tp,
                                     s.devices / s.tp, s.link_gbps, s.link_latency_us));
}

}  // namespace

LlmPlan plan_llm(const DecoderModel& model, const Device& device, const LlmOptions& options) {
  check_options(options);
  LlmPlan plan;
  plan.device = &device;
  plan.model = model;
  plan.options = options;
  if (plan.options.contexts.empty()) plan.options.contexts = {options.prompt + options.generate};
  const StepSetup s = make_step_setup(plan.model, device, plan.options);
  plan.weights_dtype = s.weights.empty() ? "as stored" : s.weights;
  plan.act_dtype = s.act;
  plan.kv_dtype = s.kv;
  plan.compute_dtype = s.gemm_peak.dtype;
  plan.weights_bytes = model_weight_bytes(s);
  plan.kv_bytes_per_token = kv_bytes_per_token(model, s.kv_bytes);
  plan.parameters = count_parameters(model);
  plan.devices = s.devices;
  plan.kv_bytes_full_context = plan.kv_bytes_per_token * cached_positions(model, static_cast<double>(options.prompt + options.generate));
  if (s.tp > 1) {
    plan.link = options.link.empty() ? (device.interconnect.count("allreduce_bus_gbps") ? "calibrated" : "") : options.link;
    if (plan.link.empty()) plan.link = device.interconnect.count("nvlink_gbps") ? "nvlink" : "pcie";
    plan.allreduce_bus_gbps = s.allreduce_gbps;
    plan.allreduce_latency_us = s.allreduce_latency_us;
    if (model.latent.present())
      plan.notes.push_back(fmt::format("the MLA latent cache is shared by the heads: each of the {} devices keeps all of it", s.tp));
    else if (model.kv_heads < s.tp)
      plan.notes.push_back(fmt::format("{} kv heads over {} devices: each device keeps a copy of one kv head", model.kv_heads, s.tp));
  }
  const int64_t limit = graph_context_limit(model);
  for (int64_t b : options.batches) plan.rows.push_back(batch_row(s, plan.options, b, limit));
  if (!options.iterations.empty() && model.mlp_intermediate <= 0)
    throw Error(kExitUsage, "--iteration prices the deployed step, which needs the model's MLP (not found in this graph)");
  for (const IterationMix& mix : options.iterations)
    plan.iterations.push_back(
        {mix, predict_deployed_step(s, StepMix::uniform(mix.decodes, mix.context, mix.prefills, mix.chunk, mix.past))});
  for (const LlmBatchRow& r : plan.rows)
    plan.peak_activation_bytes = std::max(plan.peak_activation_bytes, r.memory.activation_bytes);
  if (limit > 0) {
    int64_t beyond = 0;
    for (int64_t c : plan.options.contexts) beyond += c > limit ? 1 : 0;
    if (options.prompt + options.generate > limit || beyond > 0)
      plan.notes.push_back(model.source == "onnx"
                               ? fmt::format("the graph holds at most {} positions (its cache or position table); longer "
                                             "contexts are planned from the same weights but the export cannot run them", limit)
                               : fmt::format("the model was trained for at most {} positions (max_position_embeddings); "
                                             "longer contexts are planned all the same", limit));
  }
  if (model.fixed_batch > 0 && std::any_of(options.batches.begin(), options.batches.end(), [&](int64_t b) { return b != model.fixed_batch; }))
    plan.notes.push_back(fmt::format("the file fixes batch {}; other batches are planned from its per-token costs", model.fixed_batch));
  plan.max_sequences = max_sequences(s, plan.options);
  if (plan.max_sequences && *plan.max_sequences == 0)
    plan.notes.push_back(fmt::format("one sequence at {} tokens does not fit in {} GB (weights {:.2f} GB per device)",
                                     options.prompt + options.generate, device.memory_gb, plan.weights_bytes / s.tp / 1e9));
  for (const LlmBatchRow& r : plan.rows)
    if (!r.fits) {
      plan.notes.push_back(fmt::format("batch {} needs {:.2f} GB per device at the full context; the device has {} GB",
                                       r.batch, r.memory.total() / 1e9, device.memory_gb));
    }
  if (model.mlp_intermediate > 0) {
    const bool curves = device.achievable.kernel_curves.count("decode_gemm_m1") > 0;
    plan.notes.push_back(fmt::format("decode is priced as the deployed step of {} kernels per device (docs/llm.md), each {}",
                                     deployed_decode_kernels(model, s.tp, s.ep),
                                     curves ? "on the curve calibrate measured for its kernel class (decode_*)"
                                            : fmt::format("at the roofline plus {:.2f} us of kernel overhead and gap",
                                                          deployed_fixed_us(device))));
  }
  add_expert_notes(s, plan);
  choose_best(s, plan.options, limit, plan);
  return plan;
}

}  // namespace modelcost
