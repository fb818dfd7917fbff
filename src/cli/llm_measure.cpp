#include "cli/llm_measure.h"

#include <fmt/format.h>

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

LlmMeasuredStep run_phase(const LlmMeasureRequest& request, const DecoderModel& m, Backend& backend,
                          LlmMeasuredStep step, int64_t sequence, int64_t past, const Device& device) {
  try {
    Model model = load_model(request.model_path);
    const Analysis analysis = analyze(model, phase_dims(model, m, request, step.batch, sequence, past));
    MeasureOptions options;
    options.dtype = request.dtype;
    const ModelMeasurement whole = backend.measure_model(analysis, options);
    step.measured = whole.measured;
    step.reason = whole.reason;
    step.measured_ms = whole.median_us / 1e3;
    check_compute_floor(analysis, device, request.dtype, step);
  } catch (const Error& e) {
    step.reason = e.what();
  }
  return step;
}

}  // namespace

std::vector<LlmMeasuredStep> measure_llm_steps(const LlmMeasureRequest& request, const LlmPlan& plan, Backend& backend) {
  const DecoderModel& m = plan.model;
  const LlmBatchRow& row = plan.rows.front();
  std::vector<LlmMeasuredStep> steps;
  LlmMeasuredStep prefill;
  prefill.phase = "prefill";
  prefill.batch = row.batch;
  prefill.tokens = plan.options.prompt;
  prefill.predicted_ms = row.ttft_ms;
  if (m.fixed_batch > 0 && m.fixed_batch != row.batch) {
    prefill.reason = "the file fixes batch " + std::to_string(m.fixed_batch) + "; measure with --batch " + std::to_string(m.fixed_batch);
    steps.push_back(prefill);
    return steps;
  }
  if (m.fixed_sequence > 0 && m.fixed_sequence != plan.options.prompt)
    prefill.reason = "the file fixes the sequence at " + std::to_string(m.fixed_sequence) + " (a decode-shaped graph)";
  else
    prefill = run_phase(request, m, backend, prefill, plan.options.prompt, 0, *plan.device);
  steps.push_back(prefill);
  for (const LlmContextRow& c : row.contexts) {
    LlmMeasuredStep decode;
    decode.phase = "decode";
    decode.batch = row.batch;
    decode.tokens = c.context;
    decode.predicted_ms = c.tpot_ms;
    if (m.kv_cache.empty())
      decode.reason = "the graph has no KV cache: its decode step is derived, not runnable";
    else
      decode = run_phase(request, m, backend, decode, 1, c.context - 1, *plan.device);
    steps.push_back(decode);
  }
  return steps;
}

}  // namespace modelcost
