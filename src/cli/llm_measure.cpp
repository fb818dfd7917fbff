#include "cli/llm_measure.h"

#include <fmt/format.h>

#include <algorithm>

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

// The deployed decode step (docs/llm.md) at one batch and context, beside its prediction.
LlmMeasuredStep measure_deployed_step(const LlmPlan& plan, int64_t batch, const LlmContextRow& c) {
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
  DecodeStepSpec spec;
  spec.layers = m.layers;
  spec.hidden = m.hidden;
  spec.heads = m.heads;
  spec.kv_heads = m.kv_heads;
  spec.head_dim = m.head_dim;
  spec.intermediate = m.mlp_intermediate;
  spec.vocab = m.vocab;
  spec.gated_mlp = m.gated_mlp;
  spec.batch = batch;
  spec.context = c.context;
  spec.tensor_parallel = step.tensor_parallel;
  try {
    const DecodeStepTiming t = measure_decode_step(spec);
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
  for (const LlmBatchRow& row : plan.rows)
    for (const LlmContextRow& c : row.contexts) steps.push_back(measure_deployed_step(plan, row.batch, c));
  return steps;
}

}  // namespace modelcost
