#include "report/llm_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/number_format.h"

namespace modelcost {
namespace {

std::string gb(double bytes) { return fmt::format("{:.2f}", bytes / 1e9); }

// 8030261248 -> "8,030,261,248 (8.03 B)": parameter counts are checked against model cards digit by digit.
std::string grouped(double count) {
  std::string digits = fmt::format("{:.0f}", count);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<size_t>(at), ",");
  return fmt::format("{} ({:.2f} B)", digits, count / 1e9);
}

void print_model(const LlmPlan& plan, const std::string& name, std::ostream& out) {
  const DecoderModel& m = plan.model;
  out << fmt::format("{}: decoder LLM{}, {} layers, hidden {}, vocab {}, {} {} query / {} kv heads of {}{}\n", name,
                     m.source == "onnx" ? "" : " (" + m.source + ")", m.layers, m.hidden, m.vocab, m.attention, m.heads,
                     m.kv_heads, m.head_dim, m.rotary ? ", rotary" : "");
  for (const std::string& line : m.how) out << "  " << line << "\n";
}

void print_setup(const LlmPlan& plan, std::ostream& out) {
  const LlmOptions& o = plan.options;
  out << fmt::format("\n{}: weights {}, activations {}, KV cache {}; GEMMs on {} peak", plan.device->name,
                     plan.weights_dtype, plan.act_dtype, plan.kv_dtype, plan.compute_dtype);
  if (o.tensor_parallel > 1)
    out << fmt::format("; tensor parallel over {} ({} all-reduce {} GB/s, {} us per step)", o.tensor_parallel, plan.link,
                       plan.allreduce_bus_gbps, plan.allreduce_latency_us);
  out << "\n";
  out << fmt::format("parameters {}", grouped(plan.parameters.total));
  if (plan.model.experts.routed > 0) out << fmt::format(", {} active per token", grouped(plan.parameters.active_per_token));
  if (plan.devices > o.tensor_parallel) out << fmt::format("; expert parallel over {}", plan.devices);
  out << "\n";
  out << fmt::format("weights {} GB; KV cache {} per token, {} per sequence at {} tokens; peak activations {} GB per device\n",
                     gb(plan.weights_bytes), human_bytes(plan.kv_bytes_per_token), human_bytes(plan.kv_bytes_full_context),
                     o.prompt + o.generate, gb(plan.peak_activation_bytes));
}

void print_tables(const LlmPlan& plan, std::ostream& out) {
  const LlmOptions& o = plan.options;
  out << fmt::format("\nprompt {}, generate {} (TPOT averaged over contexts {}..{})\n", o.prompt, o.generate, o.prompt + 1,
                     o.prompt + o.generate);
  out << fmt::format("{:>6} {:>10} {:>13} {:>10} {:>13} {:>14} {:>5}\n", "batch", "TTFT ms", "mean TPOT ms", "tok/s/seq",
                     "tok/s/device", "mem/device GB", "fits");
  for (const LlmBatchRow& r : plan.rows)
    out << fmt::format("{:>6} {:>10.3f} {:>13.3f} {:>10.1f} {:>13.1f} {:>14} {:>5}\n", r.batch, r.ttft_ms, r.mean_tpot_ms,
                       r.tokens_per_s_per_sequence, r.tokens_per_s_per_device, gb(r.memory.total()), r.fits ? "yes" : "NO");
  out << fmt::format("\n{:>6} {:>8} {:>9} {:>10} {:>13} {:>9} {:>14} {:>5}\n", "batch", "context", "TPOT ms", "tok/s/seq",
                     "tok/s/device", "KV GB", "mem/device GB", "fits");
  for (const LlmBatchRow& r : plan.rows)
    for (const LlmContextRow& c : r.contexts)
      out << fmt::format("{:>6} {:>8} {:>9.3f} {:>10.1f} {:>13.1f} {:>9} {:>14} {:>5}{}\n", r.batch, c.context, c.tpot_ms,
                         c.tokens_per_s_per_sequence, c.tokens_per_s_per_device, gb(c.kv_bytes), gb(c.memory.total()),
                         c.fits ? "yes" : "NO", c.beyond_graph ? "  beyond the graph" : "");
}

void print_answers(const LlmPlan& plan, std::ostream& out) {
  const LlmOptions& o = plan.options;
  out << "\n";
  if (plan.max_sequences)
    out << fmt::format("most concurrent sequences at {} tokens: {}\n", o.prompt + o.generate, *plan.max_sequences);
  if (plan.best_batch) {
    std::string slo;
    if (o.tpot_slo_ms) slo += fmt::format(" TPOT <= {} ms", *o.tpot_slo_ms);
    if (o.ttft_slo_ms) slo += fmt::format(" TTFT <= {} ms", *o.ttft_slo_ms);
    out << fmt::format("best batch{}: {}\n", slo.empty() ? " (highest tokens/s per device)" : " under" + slo, *plan.best_batch);
  }
  if (plan.devices_needed)
    out << fmt::format("devices for {} tokens/s: {}\n", *o.target_tokens_per_s, *plan.devices_needed);
  for (const std::string& note : plan.notes) out << "note: " << note << "\n";
}

// The deployed step's kernels by role: measured (to the next role's start) beside predicted.
void print_roles(const LlmMeasuredStep& m, std::ostream& out) {
  if (m.by_role.empty()) return;
  out << fmt::format("    {:<22}{:>8}{:>12}{:>11}{:>12}{:>8}\n", "kernels by role", "count", "measured", "predicted",
                     "predicted", "ratio");
  out << fmt::format("    {:<22}{:>8}{:>12}{:>11}{:>12}{:>8}\n", "", "", "ms", "count", "ms", "");
  for (const auto& r : m.by_role) {
    const std::string ratio = r.measured_ms > 0 && r.predicted_ms > 0 ? fmt::format("{:.2f}", r.measured_ms / r.predicted_ms) : "-";
    out << fmt::format("    {:<22}{:>8}{:>12.3f}{:>11.0f}{:>12.3f}{:>8}\n", r.role, r.kernels, r.measured_ms, r.predicted_kernels,
                       r.predicted_ms, ratio);
    // A collective's time in the step includes the wait for the slowest GPU; alone it is its own.
    if (r.alone_ms > 0)
      out << fmt::format("    {:<22}{:>8}{:>12.3f}{:>11}{:>12}{:>8}\n", "  alone (own time)", "", r.alone_ms, "", "",
                         r.predicted_ms > 0 ? fmt::format("{:.2f}", r.alone_ms / r.predicted_ms) : "-");
  }
}

// --iteration: each mix's deployed step, the time a serving simulator charges for it.
void print_iterations(const LlmPlan& plan, std::ostream& out) {
  if (plan.iterations.empty()) return;
  out << "\nserving iterations (prefill chunks PxCHUNK@PAST beside decodes D@CONTEXT, one deployed step each):\n";
  out << fmt::format("  {:<24}{:>12}{:>10}{:>12}{:>14}\n", "mix", "new tokens", "kernels", "step ms", "attention ms");
  for (const LlmIterationRow& r : plan.iterations) {
    const double tokens = static_cast<double>(r.mix.prefills) * static_cast<double>(r.mix.chunk) + static_cast<double>(r.mix.decodes);
    out << fmt::format("  {:<24}{:>12.0f}{:>10.0f}{:>12.3f}{:>14.3f}\n", r.mix.label(), tokens, r.step.kernels, r.step.total_ms(),
                       r.step.attention_ms);
  }
}

void print_measured(const LlmPlan& plan, std::ostream& out) {
  if (plan.measured.empty()) return;
  out << "\nmeasured on this GPU (CUDA graph replays, median):\n";
  for (const LlmMeasuredStep& m : plan.measured) {
    std::string what = m.phase == "iteration" ? "iteration " + m.label
                                              : fmt::format("{} batch {}, {} {}", m.phase, m.batch, m.tokens,
                                                            m.phase == "prefill" ? "tokens" : "context");
    if (m.tensor_parallel > 1) what += fmt::format(", tp {}", m.tensor_parallel);
    what += " (" + (m.form.empty() ? std::string("graph as exported") : m.form) + ")";
    if (!m.measured) {
      out << fmt::format("  {}: not measured: {}\n", what, m.reason);
      continue;
    }
    out << fmt::format("  {}: {:.3f} ms, predicted {:.3f} ms (measured / predicted {:.2f})", what, m.measured_ms,
                       m.predicted_ms, m.measured_ms / m.predicted_ms);
    if (m.kernels > 0 && m.predicted_kernels > 0)
      out << fmt::format("; p10-p90 {:.3f}-{:.3f} ms; {} kernels (predicted {})", m.low_ms, m.high_ms, m.kernels,
                         m.predicted_kernels);
    else if (m.kernels > 0)
      out << fmt::format("; {} kernels", m.kernels);
    out << "\n";
    if (m.kernel_busy_ms > 0)
      out << fmt::format("    kernels busy {:.3f} ms per step: {}\n", m.kernel_busy_ms, m.kernel_breakdown);
    print_roles(m, out);
    if (!m.implementation.empty()) out << "    " << m.implementation << "\n";
  }
}

nlohmann::json step_json(const StepTime& t) {
  nlohmann::json j = {{"total_ms", t.total_ms()}, {"gemm_ms", t.gemm_ms},       {"attention_ms", t.attention_ms},
                      {"elementwise_ms", t.elementwise_ms}, {"launch_ms", t.launch_ms}, {"communication_ms", t.communication_ms},
                      {"kernels", t.kernels}};
  if (t.by_role.empty()) return j;
  nlohmann::json roles = nlohmann::json::array();
  for (const KernelRoleTime& r : t.by_role) roles.push_back({{"role", r.role}, {"kernels", r.kernels}, {"ms", r.ms}});
  j["by_role"] = roles;
  return j;
}

nlohmann::json memory_json(const MemoryPerDevice& m) {
  return {{"weights_bytes", m.weights_bytes}, {"kv_bytes", m.kv_bytes}, {"activation_bytes", m.activation_bytes},
          {"workspace_bytes", m.workspace_bytes}, {"total_bytes", m.total()}};
}

nlohmann::json model_json(const DecoderModel& m) {
  nlohmann::json cache = nlohmann::json::array();
  for (const KvCacheTensor& t : m.kv_cache) cache.push_back({{"past", t.past}, {"present", t.present}});
  return {{"token_input", m.token_input}, {"layers", m.layers}, {"hidden", m.hidden}, {"vocab", m.vocab},
          {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"attention", m.attention},
          {"attention_form", m.attention_form}, {"rotary", m.rotary}, {"kv_cache", cache},
          {"decode_derived", m.decode_derived}, {"weight_gemms", m.gemms.size()},
          {"stored_weight_bytes", m.gemm_weight_bytes + m.other_weight_bytes}, {"how", m.how},
          {"source", m.source}, {"architecture", m.architecture},
          {"sliding_window", m.sliding_window}, {"window_layers", m.window_layers},
          {"experts", {{"routed", m.experts.routed}, {"per_token", m.experts.per_token}, {"width", m.experts.width},
                       {"shared_width", m.experts.shared_width}, {"moe_layers", m.experts.moe_layers}}},
          {"latent_attention", {{"kv_lora_rank", m.latent.kv_lora_rank}, {"q_lora_rank", m.latent.q_lora_rank},
                                {"rope_head_dim", m.latent.rope_head_dim}, {"nope_head_dim", m.latent.nope_head_dim},
                                {"v_head_dim", m.latent.v_head_dim}}}};
}

}  // namespace

void print_llm_plan(const LlmPlan& plan, const std::string& model_name, std::ostream& out) {
  print_model(plan, model_name, out);
  print_setup(plan, out);
  print_tables(plan, out);
  print_answers(plan, out);
  print_iterations(plan, out);
  print_measured(plan, out);
}

void write_llm_json(const LlmPlan& plan, const std::string& model_name, std::ostream& out) {
  const LlmOptions& o = plan.options;
  nlohmann::json batches = nlohmann::json::array();
  for (const LlmBatchRow& r : plan.rows) {
    nlohmann::json contexts = nlohmann::json::array();
    for (const LlmContextRow& c : r.contexts)
      contexts.push_back({{"context", c.context}, {"tpot_ms", c.tpot_ms}, {"decode", step_json(c.decode)},
                          {"tokens_per_s_per_sequence", c.tokens_per_s_per_sequence},
                          {"tokens_per_s_per_device", c.tokens_per_s_per_device}, {"kv_bytes", c.kv_bytes},
                          {"memory_per_device", memory_json(c.memory)}, {"fits", c.fits}, {"beyond_graph", c.beyond_graph}});
    batches.push_back({{"batch", r.batch}, {"ttft_ms", r.ttft_ms}, {"prefill", step_json(r.prefill)},
                       {"mean_tpot_ms", r.mean_tpot_ms}, {"tokens_per_s_per_sequence", r.tokens_per_s_per_sequence},
                       {"tokens_per_s_per_device", r.tokens_per_s_per_device}, {"memory_per_device", memory_json(r.memory)},
                       {"fits", r.fits}, {"meets_slo", r.meets_slo}, {"contexts", contexts}});
  }
  nlohmann::json j = {
      {"model", model_name},
      {"decoder", model_json(plan.model)},
      {"device", {{"id", plan.device->id}, {"name", plan.device->name}}},
      {"precision", {{"weights", plan.weights_dtype}, {"activations", plan.act_dtype}, {"kv_cache", plan.kv_dtype},
                     {"gemm_peak", plan.compute_dtype}}},
      {"prompt", o.prompt}, {"generate", o.generate}, {"tensor_parallel", o.tensor_parallel},
      {"expert_parallel", o.expert_parallel}, {"devices_per_replica", plan.devices},
      {"parameters", plan.parameters.total}, {"active_parameters_per_token", plan.parameters.active_per_token},
      {"weights_bytes", plan.weights_bytes}, {"kv_bytes_per_token", plan.kv_bytes_per_token},
      {"kv_bytes_full_context", plan.kv_bytes_full_context}, {"peak_activation_bytes", plan.peak_activation_bytes},
      {"batches", batches}, {"notes", plan.notes}};
  if (o.tensor_parallel > 1)
    j["interconnect"] = {{"link", plan.link}, {"allreduce_bus_gbps", plan.allreduce_bus_gbps},
                         {"allreduce_latency_us", plan.allreduce_latency_us}};
  nlohmann::json measured = nlohmann::json::array();
  for (const LlmMeasuredStep& m : plan.measured) {
    nlohmann::json roles = nlohmann::json::array();
    for (const auto& r : m.by_role)
      roles.push_back({{"role", r.role}, {"kernels", r.kernels}, {"measured_ms", r.measured_ms}, {"alone_ms", r.alone_ms},
                       {"predicted_kernels", r.predicted_kernels}, {"predicted_ms", r.predicted_ms}});
    measured.push_back({{"phase", m.phase}, {"label", m.label}, {"form", m.form}, {"batch", m.batch}, {"tokens", m.tokens},
                        {"tensor_parallel", m.tensor_parallel}, {"measured", m.measured}, {"reason", m.reason},
                        {"measured_ms", m.measured_ms}, {"p10_ms", m.low_ms}, {"p90_ms", m.high_ms},
                        {"kernels", m.kernels}, {"predicted_kernels", m.predicted_kernels},
                        {"implementation", m.implementation}, {"kernel_busy_ms", m.kernel_busy_ms},
                        {"kernel_breakdown", m.kernel_breakdown}, {"by_role", roles}, {"predicted_ms", m.predicted_ms}});
  }
  if (!measured.empty()) j["measured"] = measured;
  nlohmann::json iterations = nlohmann::json::array();
  for (const LlmIterationRow& r : plan.iterations)
    iterations.push_back({{"mix", r.mix.label()}, {"prefills", r.mix.prefills}, {"chunk", r.mix.chunk}, {"past", r.mix.past},
                          {"decodes", r.mix.decodes}, {"context", r.mix.context}, {"step", step_json(r.step)}});
  if (!iterations.empty()) j["iterations"] = iterations;
  j["max_sequences"] = plan.max_sequences ? nlohmann::json(*plan.max_sequences) : nlohmann::json(nullptr);
  j["best_batch"] = plan.best_batch ? nlohmann::json(*plan.best_batch) : nlohmann::json(nullptr);
  j["devices_needed"] = plan.devices_needed ? nlohmann::json(*plan.devices_needed) : nlohmann::json(nullptr);
  out << nlohmann::json{{"llm", j}}.dump(1) << "\n";
}

void write_llm_csv(const LlmPlan& plan, std::ostream& out) {
  out << "batch,context,ttft_ms,tpot_ms,mean_tpot_ms,tokens_per_s_per_sequence,tokens_per_s_per_device,kv_bytes,"
         "memory_per_device_bytes,fits,beyond_graph\n";
  for (const LlmBatchRow& r : plan.rows)
    for (const LlmContextRow& c : r.contexts)
      out << fmt::format("{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{}\n", r.batch, c.context, r.ttft_ms,
                         c.tpot_ms, r.mean_tpot_ms, c.tokens_per_s_per_sequence, c.tokens_per_s_per_device, c.kv_bytes,
                         c.memory.total(), c.fits ? "true" : "false", c.beyond_graph ? "true" : "false");
}

}  // namespace modelcost
