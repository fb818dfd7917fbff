#include "cli/llm_measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "ops/op_registry.h"
#include "shapes/shape_engine.h"

namespace modelcost {
namespace {

// The graph's dims for one phase: the recognition's naming of the token, cache and mask dims at
// this phase's sequence and past lengths, the batch, then the user's --dim.
ShapeOptions phase_dims(const Model& model, const DecoderModel& m, const LlmMeasureRequest& request, int64_t batch,
                        int64_t sequence, int64_t past) {
  ShapeOptions options;
  RecognitionProbe probe;
  probe.sequence = sequence;
  probe.past = past;
  for (const auto& [name, value] : probe_dims(model, probe)) options.dims[name] = value;
  if (!m.batch_symbol.empty()) options.dims[m.batch_symbol] = batch;
  for (const auto& [name, value] : request.user_dims) options.dims[name] = value;
  return options;
}

// A whole-graph time below its FLOPs at the device's peak cannot be a run of the whole graph.
void check_compute_floor(const Analysis& analysis, const Device& device, const std::string& dtype, LlmMeasuredStep& step) {
  const double peak = choose_peak(device, MathPath::kTensor, dtype.empty() ? "fp16" : dtype).flops_per_s;
  const double floor_ms = peak > 0 ? analysis.totals.flops / peak * 1e3 : 0;
  if (!step.measured || step.measured_ms >= floor_ms) return;
  step.measured = false;
  step.reason = fmt::format("the median {:.3f} ms is below {:.3f} ms, its {:.3g} FLOPs at the device's peak: the run did "
                            "not do the whole graph, so it is not reported", step.measured_ms, floor_ms, analysis.totals.flops);
}

// The shapes the graph was analysed (and so run) at must be the step's: a file whose batch or
// sequence dim modelcost cannot set would otherwise run at its own size under this step's label.
std::string token_shape_problem(const Analysis& analysis, const DecoderModel& m, int64_t batch, int64_t sequence) {
  const int id = analysis.graph->find(m.token_input);
  if (id < 0) return "";
  const TensorInfo& token = analysis.graph->tensors[static_cast<size_t>(id)];
  if (!token.has_shape || token.shape.size() < 2) return "";
  if (token.shape[0] == batch && token.shape[1] == sequence) return "";
  return fmt::format("the graph's '{}' is {}x{} here, not batch {} x {} tokens (set its dims with --dim)", m.token_input,
                     token.shape[0], token.shape[1], batch, sequence);
}

LlmMeasuredStep run_phase(const LlmMeasureRequest& request, const DecoderModel& m, Backend& backend,
                          LlmMeasuredStep step, int64_t sequence, int64_t past, const Device& device) {
  try {
    Model model = load_model(request.model_path);
    const Analysis analysis = analyze(model, phase_dims(model, m, request, step.batch, sequence, past));
    step.reason = token_shape_problem(analysis, m, step.batch, sequence);
    if (!step.reason.empty()) return step;
    MeasureOptions options;
    options.dtype = request.dtype;
    const ModelMeasurement whole = backend.measure_model(analysis, options);
    step.measured = whole.measured;
    step.reason = whole.reason;
    step.measured_ms = whole.median_us / 1e3;
    if (whole.has_kernel_breakdown) {
      step.kernels = whole.kernels_per_run;
      step.kernel_busy_ms = whole.kernel_busy_us / 1e3;
    }
    step.implementation = fmt::format("'{}' {}x{}, {:.3g} FLOPs", m.token_input, step.batch, sequence, analysis.totals.flops);
    check_compute_floor(analysis, device, request.dtype, step);
  } catch (const Error& e) {
    step.reason = e.what();
  }
  return step;
}

// Why the deployed step cannot be measured for this plan; "" when it can.
std::string deployed_step_problem(const LlmPlan& plan) {
  const DecoderModel& m = plan.model;
  if (m.experts.routed > 0 && plan.options.expert_parallel > 1)
    return "the deployed step splits the experts like the other products (--tp): expert parallelism is planned, not measured";
  if (m.mlp_intermediate <= 0)
    return "the layers' GEMMs show no MLP (a down projection fed by an up or a gate/up projection): no shapes for the "
           "deployed step";
  bool stored_fp16 = true;
  for (const WeightGemm& g : m.gemms) stored_fp16 = stored_fp16 && g.stored_dtype == "fp16";
  const bool fp16_weights = plan.weights_dtype == "fp16" || (plan.weights_dtype == "as stored" && stored_fp16);
  if (plan.act_dtype != "fp16" || plan.kv_dtype != "fp16" || !fp16_weights)
    return "the deployed step runs in fp16 (weights, activations and KV cache): plan with --dtype fp16";
  return "";
}

// The measured roles in launch order, each beside its prediction; predicted roles the step did
// not run follow with no measurement.
std::vector<LlmMeasuredStep::RoleComparison> compare_roles(const std::vector<KernelRoleTiming>& measured,
                                                           const std::vector<KernelRoleTime>& predicted) {
  std::vector<LlmMeasuredStep::RoleComparison> out;
  if (measured.empty()) return out;
  for (const KernelRoleTiming& m : measured) out.push_back({m.role, m.kernels, m.us / 1e3, 0, 0, m.alone_us / 1e3});
  for (const KernelRoleTime& p : predicted) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& r) { return r.role == p.role; });
    if (it == out.end()) it = out.insert(out.end(), {p.role, 0, 0, 0, 0});
    it->predicted_kernels = p.kernels;
    it->predicted_ms = p.ms;
  }
  return out;
}

// Where the deployed steps run: the backend that times them, the GPU memory a step may fill (less
// the runtime's reserve) and the tensor-parallel degree.
struct StepGpu {
  Backend& backend;
  double free_bytes = 0;
  int64_t tp = 1;
};

// One run of the deployed step at `layers` layers (the model's own, or fewer when it does not fit).
ServingStepTiming run_deployed_step(const DecoderModel& m, const IterationMix& shape, StepGpu& gpu, int64_t layers) {
  ServingStepSpec spec;
  spec.layers = layers;
  spec.hidden = m.hidden;
  spec.heads = m.heads;
  spec.kv_heads = m.kv_heads;
  spec.head_dim = m.head_dim;
  spec.intermediate = m.mlp_intermediate;
  spec.vocab = m.vocab;
  spec.gated_mlp = m.gated_mlp;
  spec.kv_lora_rank = m.latent.kv_lora_rank;
  spec.q_lora_rank = m.latent.q_lora_rank;
  spec.rope_head_dim = m.latent.rope_head_dim;
  spec.nope_head_dim = m.latent.nope_head_dim;
  spec.v_head_dim = m.latent.v_head_dim;
  if (m.experts.routed > 0) {
    spec.experts = m.experts.routed;
    spec.experts_per_token = m.experts.per_token;
    spec.expert_width = m.experts.width;
    spec.shared_expert_width = m.experts.shared_width;
    // The dense layers come first; a reduced depth keeps them and at least one MoE layer.
    spec.dense_layers = std::min(m.layers - m.experts.moe_layers, layers - 1);
  }
  spec.batch = shape.decodes;
  spec.context = shape.context;
  spec.prefills = shape.prefills;
  spec.prefill_tokens = shape.chunk;
  spec.prefill_past = shape.past;
  spec.tensor_parallel = gpu.tp;
  // A prefill of thousands of tokens runs for milliseconds: fewer replays keep the run short.
  if (shape.prefills * shape.chunk > 256) {
    spec.warmup = 3;
    spec.repeats = 20;
  }
  return gpu.backend.measure_serving_step(spec);
}

// The step at the model's depth from runs at two reduced depths: every time, the kernel count and
// each role's time extrapolated linearly in the layers.
ServingStepTiming extrapolated_step(const ServingStepTiming& deep, int64_t deep_layers, const ServingStepTiming& shallow,
                                    int64_t shallow_layers, int64_t full) {
  auto at_full = [&](double a, double b) { return extrapolate_to_depth(full, deep_layers, a, shallow_layers, b); };
  ServingStepTiming t = deep;
  t.median_us = at_full(deep.median_us, shallow.median_us);
  t.p10_us = at_full(deep.p10_us, shallow.p10_us);
  t.p90_us = at_full(deep.p90_us, shallow.p90_us);
  t.kernels = static_cast<int64_t>(std::llround(at_full(static_cast<double>(deep.kernels), static_cast<double>(shallow.kernels))));
  t.kernel_busy_us = at_full(deep.kernel_busy_us, shallow.kernel_busy_us);
  for (KernelRoleTiming& role : t.by_role) {
    auto it = std::find_if(shallow.by_role.begin(), shallow.by_role.end(), [&](const auto& r) { return r.role == role.role; });
    if (it == shallow.by_role.end()) continue;
    role.us = at_full(role.us, it->us);
    role.alone_us = at_full(role.alone_us, it->alone_us);
    role.kernels = static_cast<int64_t>(std::llround(at_full(static_cast<double>(role.kernels), static_cast<double>(it->kernels))));
  }
  t.kernel_breakdown = fmt::format("at {} layers: {}", deep_layers, deep.kernel_breakdown);
  t.implementation = fmt::format("run at {} and {} of the {} layers (the model does not fit the GPU), extrapolated "
                                 "linearly in the layers; {}", deep_layers, shallow_layers, full, deep.implementation);
  return t;
}

// fp16 activations of a step of `rows` new tokens and `sequences` logits rows on one device, its
// prefill chunks reading `prefill_keys` positions. MLA's widest per-row buffers: the queries and
// latent, the absorbed queries and the decode's latent outputs; per prefill position, its keys and
// values up-projected from the latent, then laid out as attention reads them.
double step_activation_bytes(const DecoderModel& m, int64_t rows, int64_t sequences, double prefill_keys, int64_t tp) {
  const double h = static_cast<double>(m.hidden);
  double attn = static_cast<double>(m.heads / tp * m.head_dim);
  double qkv = static_cast<double>((m.heads / tp + 2 * std::max<int64_t>(1, m.kv_heads / tp)) * m.head_dim);
  double per_key = 0;
  if (m.latent.present()) {
    const LatentAttention& a = m.latent;
    const double heads = static_cast<double>(m.heads / tp), latent = static_cast<double>(a.kv_lora_rank + a.rope_head_dim);
    qkv = heads * static_cast<double>(a.nope_head_dim + a.rope_head_dim) + latent + static_cast<double>(a.q_lora_rank);
    attn = heads * (static_cast<double>(a.nope_head_dim + a.rope_head_dim) + latent + static_cast<double>(a.kv_lora_rank));
    per_key = heads * static_cast<double>(2 * a.nope_head_dim + a.rope_head_dim + 2 * a.v_head_dim);
  }
  const double width = static_cast<double>(m.mlp_intermediate / tp), mlp_out = (m.gated_mlp ? 2 : 1) * width;
  const double vocab = static_cast<double>((m.vocab + tp - 1) / tp);
  // The experts' scores, and per pair (row, expert) its gate/up, activation and output rows.
  const ExpertLayers& e = m.experts;
  const double experts = static_cast<double>(e.routed) + static_cast<double>(e.per_token) *
                         (3 * static_cast<double>(std::max(e.width, e.shared_width) / tp) + h);
  return 2 * (static_cast<double>(rows) * (2 * h + qkv + 2 * attn + mlp_out + width + experts) +
              static_cast<double>(sequences) * (h + vocab * static_cast<double>(1 + tp)) + prefill_keys * per_key);
}

// The deployed step at one shape, at the model's depth or extrapolated from two that fit.
ServingStepTiming time_deployed_step(const DecoderModel& m, const IterationMix& shape, StepGpu& gpu) {
  ServingStepTiming t;
  // Counted in doubles: an --iteration's counts may be far beyond anything a GPU holds.
  const double positions = static_cast<double>(shape.decodes) * static_cast<double>(shape.context) +
                           static_cast<double>(shape.prefills) * static_cast<double>(shape.past + shape.chunk);
  const double rows = static_cast<double>(shape.decodes) + static_cast<double>(shape.prefills) * static_cast<double>(shape.chunk);
  if (positions > 1e12 || rows > 1e9) {
    t.reason = "the step's cache or rows are far beyond any GPU's memory";
    return t;
  }
  const double prefill_keys = static_cast<double>(shape.prefills) * static_cast<double>(shape.past + shape.chunk);
  const double activations =
      step_activation_bytes(m, static_cast<int64_t>(rows), shape.decodes + shape.prefills, prefill_keys, gpu.tp);
  // measurable_depths sizes the cache of `batch` sequences at `context`: one sequence of all the positions.
  const std::vector<int64_t> depths =
      measurable_depths(m, 1, std::max<int64_t>(1, static_cast<int64_t>(positions)), gpu.tp, gpu.free_bytes - activations);
  if (depths.empty()) {
    t.reason = fmt::format("two layers of this step do not fit the GPU's {:.1f} GB", gpu.free_bytes / 1e9);
    return t;
  }
  t = run_deployed_step(m, shape, gpu, depths.front());
  if (depths.size() == 2 && t.measured) {
    const ServingStepTiming shallow = run_deployed_step(m, shape, gpu, depths.back());
    t = shallow.measured ? extrapolated_step(t, depths.front(), shallow, depths.back(), m.layers) : shallow;
  }
  return t;
}

void record_timing(const ServingStepTiming& t, const std::vector<KernelRoleTime>& predicted, LlmMeasuredStep& step) {
  step.measured = t.measured;
  step.reason = t.reason;
  step.measured_ms = t.median_us / 1e3;
  step.low_ms = t.p10_us / 1e3;
  step.high_ms = t.p90_us / 1e3;
  step.kernels = t.kernels;
  step.implementation = t.implementation;
  step.kernel_busy_ms = t.kernel_busy_us / 1e3;
  step.kernel_breakdown = t.kernel_breakdown;
  step.by_role = compare_roles(t.by_role, predicted);
}

// The deployed decode step (docs/llm.md) at one batch and context, beside its prediction.
LlmMeasuredStep measure_deployed_step(const LlmPlan& plan, int64_t batch, const LlmContextRow& c, StepGpu& gpu) {
  const DecoderModel& m = plan.model;
  LlmMeasuredStep step;
  step.phase = "decode";
  step.form = "deployed step";
  step.batch = batch;
  step.tokens = c.context;
  step.tensor_parallel = plan.options.tensor_parallel;
  step.predicted_ms = c.tpot_ms;
  step.predicted_kernels = deployed_decode_kernels(m, step.tensor_parallel);
  step.reason = deployed_step_problem(plan);
  if (!step.reason.empty()) return step;
  try {
    IterationMix shape;
    shape.decodes = batch;
    shape.context = c.context;
    record_timing(time_deployed_step(m, shape, gpu), c.decode.by_role, step);
  } catch (const Error& e) {
    step.reason = e.what();
  }
  return step;
}

// Runs of a chunked prefill added up: times, kernels and roles.
void add_chunk(const ServingStepTiming& chunk, ServingStepTiming& total) {
  total.median_us += chunk.median_us;
  total.p10_us += chunk.p10_us;
  total.p90_us += chunk.p90_us;
  total.kernels += chunk.kernels;
  total.kernel_busy_us += chunk.kernel_busy_us;
  if (total.kernel_breakdown.empty()) total.kernel_breakdown = chunk.kernel_breakdown;
  if (total.implementation.empty()) total.implementation = chunk.implementation;
  for (const KernelRoleTiming& r : chunk.by_role) {
    auto it = std::find_if(total.by_role.begin(), total.by_role.end(), [&](const auto& x) { return x.role == r.role; });
    if (it == total.by_role.end()) it = total.by_role.insert(total.by_role.end(), KernelRoleTiming{r.role, 0, 0});
    it->kernels += r.kernels;
    it->us += r.us;
    it->alone_us += r.alone_us;
  }
}

// At most this many chunks of a chunked prefill are run (each is its own step).
constexpr int64_t kMostMeasuredChunks = 16;

// The deployed prefill (TTFT) at one batch: the prompt in one step, or chunk by chunk.
LlmMeasuredStep measure_deployed_prefill(const LlmPlan& plan, const LlmBatchRow& row, StepGpu& gpu) {
  const DecoderModel& m = plan.model;
  const int64_t prompt = plan.options.prompt;
  const int64_t chunk = plan.options.prefill_chunk > 0 ? std::min(plan.options.prefill_chunk, prompt) : prompt;
  const int64_t chunks = (prompt + chunk - 1) / chunk;
  LlmMeasuredStep step;
  step.phase = "prefill";
  step.form = "deployed step";
  step.batch = row.batch;
  step.tokens = prompt;
  step.tensor_parallel = plan.options.tensor_parallel;
  step.predicted_ms = row.ttft_ms;
  const int64_t per_chunk = deployed_step_kernels(m, {false, true, step.tensor_parallel, 1});
  step.predicted_kernels = per_chunk * chunks;
  step.reason = deployed_step_problem(plan);
  if (step.reason.empty() && chunks > kMostMeasuredChunks)
    step.reason = fmt::format("{} chunks of {} tokens: at most {} are measured (raise --prefill-chunk)", chunks, chunk, kMostMeasuredChunks);
  if (!step.reason.empty()) return step;
  try {
    ServingStepTiming total;
    total.measured = true;
    for (int64_t past = 0; past < prompt && total.measured; past += chunk) {
      const ServingStepTiming t = time_deployed_step(m, {row.batch, std::min(chunk, prompt - past), past, 0, 1}, gpu);
      if (!t.measured) total = t;
      else add_chunk(t, total);
    }
    if (chunks > 1 && total.measured) total.implementation = fmt::format("{} chunks of {}; first: {}", chunks, chunk, total.implementation);
    record_timing(total, row.prefill.by_role, step);
  } catch (const Error& e) {
    step.reason = e.what();
  }
  return step;
}

// A serving iteration (--iteration): its prefill chunks and decodes in one deployed step.
LlmMeasuredStep measure_deployed_iteration(const LlmPlan& plan, const LlmIterationRow& row, StepGpu& gpu) {
  const IterationMix& mix = row.mix;
  LlmMeasuredStep step;
  step.phase = "iteration";
  step.label = mix.label();
  step.form = "deployed step";
  step.batch = mix.prefills + mix.decodes;
  // New tokens; an unrunnable mix (counts far beyond any GPU) keeps 0 and says why below.
  const double tokens = static_cast<double>(mix.prefills) * static_cast<double>(mix.chunk) + static_cast<double>(mix.decodes);
  step.tokens = tokens < 1e15 ? static_cast<int64_t>(tokens) : 0;
  step.tensor_parallel = plan.options.tensor_parallel;
  step.predicted_ms = row.step.total_ms();
  step.predicted_kernels = deployed_step_kernels(plan.model, {mix.decodes > 0, mix.prefills > 0, step.tensor_parallel, 1});
  step.reason = deployed_step_problem(plan);
  if (!step.reason.empty()) return step;
  try {
    IterationMix shape = mix;
    shape.context = std::max<int64_t>(1, shape.context);  // a step without decodes still names a context
    record_timing(time_deployed_step(plan.model, shape, gpu), row.step.by_role, step);
  } catch (const Error& e) {
    step.reason = e.what();
  }
  return step;
}

// The exported graph itself as the prefill and a decode step per context, at the first batch.
void measure_exported_graph(const LlmMeasureRequest& request, const LlmPlan& plan, Backend& backend,
                            std::vector<LlmMeasuredStep>& steps) {
  const DecoderModel& m = plan.model;
  const LlmBatchRow& row = plan.rows.front();
  LlmMeasuredStep prefill;
  prefill.phase = "prefill";
  prefill.form = "graph as exported";
  prefill.batch = row.batch;
  prefill.tokens = plan.options.prompt;
  prefill.predicted_ms = row.ttft_ms;
  if (m.fixed_batch > 0 && m.fixed_batch != row.batch) {
    prefill.reason = "the file fixes batch " + std::to_string(m.fixed_batch) + "; measure with --batch " + std::to_string(m.fixed_batch);
    steps.push_back(prefill);
    return;
  }
  if (m.fixed_sequence > 0 && m.fixed_sequence != plan.options.prompt)
    prefill.reason = "the file fixes the sequence at " + std::to_string(m.fixed_sequence) + " (a decode-shaped graph)";
  else
    prefill = run_phase(request, m, backend, prefill, plan.options.prompt, 0, *plan.device);
  steps.push_back(prefill);
  for (const LlmContextRow& c : row.contexts) {
    LlmMeasuredStep decode;
    decode.phase = "decode";
    decode.form = "graph as exported";
    decode.batch = row.batch;
    decode.tokens = c.context;
    decode.predicted_ms = c.tpot_ms;
    if (m.kv_cache.empty())
      decode.reason = "the graph has no KV cache: its decode step is derived, not runnable";
    else
      decode = run_phase(request, m, backend, decode, 1, c.context - 1, *plan.device);
    steps.push_back(decode);
  }
}

}  // namespace

std::vector<LlmMeasuredStep> measure_llm_steps(const LlmMeasureRequest& request, const LlmPlan& plan, Backend& backend) {
  std::vector<LlmMeasuredStep> steps;
  // The exported graph runs on one GPU; with --tp only the deployed step is sharded.
  // A config.json has no graph: only the deployed step runs.
  if (plan.options.tensor_parallel == 1 && plan.model.source == "onnx") measure_exported_graph(request, plan, backend, steps);
  // The GPU's memory less the runtime reserve: a deeper model runs at reduced depth.
  StepGpu gpu{backend, backend.device().memory_bytes - plan.options.workspace_bytes, plan.options.tensor_parallel};
  for (const LlmIterationRow& row : plan.iterations) steps.push_back(measure_deployed_iteration(plan, row, gpu));
  for (const LlmBatchRow& row : plan.rows) {
    steps.push_back(measure_deployed_prefill(plan, row, gpu));
    for (const LlmContextRow& c : row.contexts) steps.push_back(measure_deployed_step(plan, row.batch, c, gpu));
  }
  return steps;
}

}  // namespace modelcost
