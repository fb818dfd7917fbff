#include "report/deployed_measured.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/slow_conv_reason.h"
#include "report/text_table.h"

namespace modelcost {
namespace {

struct Shared {
  DeployedMeasurement measured;
  FusionPlan plan;
  std::vector<double> predicted_us;  // per group, empty without a roofline
};

// The group as a conv measured against its prediction, for slow_conv_reason.
SlowConv as_slow_conv(const Shared& s, size_t k) {
  const GroupMeasurement& g = s.measured.groups[k];
  const bool timed = g.timing.measured && !g.timing.zero_cost && !s.predicted_us.empty();
  return SlowConv{s.plan.groups[k].kernel, g.runner, timed ? g.timing.median_us : 0, timed ? s.predicted_us[k] : 0};
}

Json group_json(const Shared& s, size_t k) {
  const GroupMeasurement& g = s.measured.groups[k];
  const FusedGroup& f = s.plan.groups[k];
  Json j{{"id", f.id}, {"label", f.label}, {"runner", g.runner}, {"fused", g.fused}, {"fell_back", g.fell_back}};
  if (g.fell_back) j["fallback_reason"] = g.fallback_reason;
  if (g.timing.measured) j["measured_us"] = g.timing.zero_cost ? 0.0 : g.timing.median_us;
  else j["reason"] = g.timing.reason;
  if (!s.predicted_us.empty()) j["predicted_us"] = s.predicted_us[k];
  if (const SlowConv c = as_slow_conv(s, k); is_slow_conv(c)) j["slow_conv_reason"] = slow_conv_reason(c);
  Json kernels = Json::array();
  for (const auto& name : g.timing.kernels) kernels.push_back(name);
  j["kernels"] = kernels;
  return j;
}

// Convs measured slower than kSlowConvRatio x their prediction, each with its reason (or none).
void print_slow_convs(const Shared& s, std::ostream& out) {
  for (size_t k = 0; k < s.measured.groups.size(); ++k) {
    const SlowConv c = as_slow_conv(s, k);
    if (!is_slow_conv(c)) continue;
    const std::string reason = slow_conv_reason(c);
    out << fmt::format("  group {} ({}) measured {:.1f}x its prediction: {}\n", s.plan.groups[k].id, s.plan.groups[k].label,
                       c.measured_us / c.predicted_us, reason.empty() ? "no named reason" : reason);
  }
}

void print_summary(const Shared& s, std::ostream& out) {
  const DeployedMeasurement& m = s.measured;
  if (!m.measured) {
    out << "\nDeployed measurement: not measured: " << m.reason << "\n";
    return;
  }
  out << fmt::format("\nDeployed measured: {:.3f} ms (CUDA graph of {} groups), sum of group medians {:.3f} ms; "
                     "{} groups fused, {} fell back to per-node kernels, {} run nothing\n",
                     m.whole.median_us / 1e3, m.groups.size(), m.sum_of_group_medians_us / 1e3, m.fused_groups,
                     m.fallback_groups, m.empty_groups);
  if (m.whole.has_kernel_breakdown)
    out << fmt::format("  one replay: {} kernels busy {:.3f} ms, idle {:.3f} ms; {} graph nodes other than kernels\n",
                       m.whole.kernels_per_run, m.whole.kernel_busy_us / 1e3,
                       std::max(0.0, m.whole.median_us - m.whole.kernel_busy_us) / 1e3, m.non_kernel_nodes);
  std::vector<size_t> order;
  for (size_t k = 0; k < m.groups.size(); ++k)
    if (m.groups[k].timing.measured && !m.groups[k].timing.zero_cost) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m.groups[a].timing.median_us > m.groups[b].timing.median_us; });
  if (order.size() > 10) order.resize(10);
  TextTable t;
  using A = TextTable::Align;
  t.add_column("group", A::kRight);
  t.add_column("kernel", A::kLeft, 28);
  t.add_column("runner", A::kLeft, 48);
  t.add_column("pred us", A::kRight);
  t.add_column("meas us", A::kRight);
  for (size_t k : order)
    t.add_row({std::to_string(s.plan.groups[k].id), s.plan.groups[k].label, m.groups[k].runner,
               s.predicted_us.empty() ? "" : fmt::format("{:.3g}", s.predicted_us[k]),
               fmt::format("{:.3g}", m.groups[k].timing.median_us)});
  t.print(out);
  for (size_t k = 0; k < m.groups.size(); ++k)
    if (m.groups[k].fell_back)
      out << fmt::format("  group {} ({}) fell back: {}\n", s.plan.groups[k].id, s.plan.groups[k].label,
                         m.groups[k].fallback_reason);
  print_slow_convs(s, out);
}

}  // namespace

void add_deployed_measurement(Report& report, const DeployedMeasurement& measured, const FusionPlan& plan,
                              const RooflineReport* roofline) {
  auto s = std::make_shared<Shared>(Shared{measured, plan, {}});
  if (roofline && roofline->groups.size() == plan.groups.size())
    for (const auto& g : roofline->groups) s->predicted_us.push_back(g.predicted_us);
  if (measured.measured)
    report.totals.push_back({"measured_latency_deployed_ms", "measured latency deployed (ms)", "ms", ColumnKind::kTime,
                             kSinkTable | kSinkJson,
                             [s](const Analysis&) { return CellValue::of_number(s->measured.whole.median_us / 1e3); }});
  report.sections.push_back({"deployed_measurement",
                             [s] {
                               const DeployedMeasurement& m = s->measured;
                               Json groups = Json::array();
                               for (size_t k = 0; k < m.groups.size(); ++k) groups.push_back(group_json(*s, k));
                               Json j{{"measured", m.measured}, {"method", m.whole.method}, {"groups", groups},
                                      {"fused_groups", m.fused_groups}, {"fallback_groups", m.fallback_groups},
                                      {"empty_groups", m.empty_groups}};
                               if (m.measured) {
                                 j["median_us"] = m.whole.median_us;
                                 j["min_us"] = m.whole.min_us;
                                 j["rel_stddev"] = m.whole.rel_stddev;
                                 j["samples"] = m.whole.samples;
                                 j["sum_of_group_medians_us"] = m.sum_of_group_medians_us;
                                 j["non_kernel_nodes"] = m.non_kernel_nodes;
                                 if (m.whole.has_kernel_breakdown) {
                                   j["kernels_per_run"] = m.whole.kernels_per_run;
                                   j["kernel_busy_us"] = m.whole.kernel_busy_us;
                                 }
                               } else {
                                 j["reason"] = m.reason;
                               }
                               return j;
                             },
                             [s](std::ostream& out) { print_summary(*s, out); }});
}

}  // namespace modelcost
