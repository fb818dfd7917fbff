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
  if (m.experts.routed > 0 || m.latent.present())
    return "the deployed step is a dense block with ordinary attention: mixtures of experts and MLA are planned, not measured";
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
  for (const KernelRoleTiming& m : measured) out.push_back({m.role, m.kernels, m.us / 1e3, 0, 0});
  for (const KernelRoleTime& p : predicted) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& r) { return r.role == p.role; });
    if (it == out.end()) it = out.insert(out.end(), {p.role, 0, 0, 0, 0});
    it->predicted_kernels = p.kernels;
    it->predicted_ms = p.ms;
  }
  return out;
}

// One run of the deployed step at `layers` layers (the model's own, or fewer when it does not fit).
DecodeStepTiming run_deployed_step(const DecoderModel& m, const LlmMeasuredStep& step, int64_t layers) {
  DecodeStepSpec spec;
  spec.layers = layers;
  spec.hidden = m.hidden;
  spec.heads = m.heads;
  spec.kv_heads = m.kv_heads;
  spec.head_dim = m.head_dim;
  spec.intermediate = m.mlp_intermediate;
  spec.vocab = m.vocab;
  spec.gated_mlp = m.gated_mlp;
  spec.batch = step.batch;
  spec.context = step.tokens;
  spec.tensor_parallel = step.tensor_parallel;
  return measure_decode_step(spec);
}

// The step at the model's depth from runs at two reduced depths: every time, the kernel count and
// each role's time extrapolated linearly in the layers.
DecodeStepTiming extrapolated_step(const DecodeStepTiming& deep, int64_t deep_layers, const DecodeStepTiming& shallow,
                                   int64_t shallow_layers, int64_t full) {
  auto at_full = [&](double a, double b) { return extrapolate_to_depth(full, deep_layers, a, shallow_layers, b); };
  DecodeStepTiming t = deep;
  t.median_us = at_full(deep.median_us, shallow.median_us);
  t.p10_us = at_full(deep.p10_us, shallow.p10_us);
  t.p90_us = at_full(deep.p90_us, shallow.p90_us);
  t.kernels = static_cast<int64_t>(std::llround(at_full(static_cast<double>(deep.kernels), static_cast<double>(shallow.kernels))));
  t.kernel_busy_us = at_full(deep.kernel_busy_us, shallow.kernel_busy_us);
  for (KernelRoleTiming& role : t.by_role) {
    auto it = std::find_if(shallow.by_role.begin(), shallow.by_role.end(), [&](const auto& r) { return r.role == role.role; });
    if (it == shallow.by_role.end()) continue;
    role.us = at_full(role.us, it->us);
    role.kernels = static_cast<int64_t>(std::llround(at_full(static_cast<double>(role.kernels), static_cast<double>(it->kernels))));
  }
  t.kernel_breakdown = fmt::format("at {} layers: {}", deep_layers, deep.kernel_breakdown);
  t.implementation = fmt::format("run at {} and {} of the {} layers (the model does not fit the GPU), extrapolated "
                                 "linearly in the layers; {}", deep_layers, shallow_layers, full, deep.implementation);
  return t;
}

// The deployed decode step (docs/llm.md) at one batch and context, beside its prediction.
LlmMeasuredStep measure_deployed_step(const LlmPlan& plan, int64_t batch, const LlmContextRow& c, double free_bytes) {
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
  const std::vector<int64_t> depths = measurable_depths(m, batch, c.context, step.tensor_parallel, free_bytes);
  if (depths.empty()) {
    step.reason = fmt::format("two layers at batch {} and context {} do not fit the GPU's {:.1f} GB", batch, c.context, free_bytes / 1e9);
    return step;
  }
  try {
    DecodeStepTiming t = run_deployed_step(m, step, depths.front());
    if (depths.size() == 2 && t.measured) {
      const DecodeStepTiming shallow = run_deployed_step(m, step, depths.back());
      if (shallow.measured) t = extrapolated_step(t, depths.front(), shallow, depths.back(), m.layers);
      else t = shallow;
    }
    step.measured = t.measured;
    step.reason = t.reason;
    step.measured_ms = t.median_us / 1e3;
    step.low_ms = t.p10_us / 1e3;
    step.high_ms = t.p90_us / 1e3;
    step.kernels = t.kernels;
    step.implementation = t.implementation;
    step.kernel_busy_ms = t.kernel_busy_us / 1e3;
    step.kernel_breakdown = t.kernel_breakdown;
    step.by_role = compare_roles(t.by_role, c.decode.by_role);
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
  const double free_bytes = backend.device().memory_bytes - plan.options.workspace_bytes;
  for (const LlmBatchRow& row : plan.rows)
    for (const LlmContextRow& c : row.contexts) steps.push_back(measure_deployed_step(plan, row.batch, c, free_bytes));
  return steps;
}

}  // namespace modelcost
