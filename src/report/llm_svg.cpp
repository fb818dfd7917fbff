// SVG of the LLM plan against batch: TTFT (one line), TPOT and tokens/s per device (one line per
// decode context), with gridlines and the SLOs as dashed lines.
#include <fmt/format.h>

#include <functional>
#include <optional>

#include "report/llm_report.h"
#include "report/svg_chart.h"

namespace modelcost {
namespace {

using RowValue = std::function<double(const LlmBatchRow&, const LlmContextRow&)>;

// One series per decode context (one alone where the figure does not depend on the context).
ChartPanel plan_panel(const LlmPlan& plan, double left, const std::string& title, const RowValue& value, bool per_context,
                      std::optional<double> slo) {
  ChartPanel panel;
  panel.left = left;
  panel.title = title;
  panel.x_label = "batch";
  panel.slo = slo;
  for (const LlmBatchRow& r : plan.rows) panel.x_ticks.push_back(static_cast<double>(r.batch));
  const size_t contexts = per_context ? plan.rows.front().contexts.size() : std::min<size_t>(1, plan.rows.front().contexts.size());
  for (size_t i = 0; i < contexts; ++i) {
    ChartSeries series{per_context ? chart_colour(i) : "#333", {}};
    for (const LlmBatchRow& r : plan.rows) {
      if (i >= r.contexts.size()) continue;
      const LlmContextRow& c = r.contexts[i];
      series.points.push_back({static_cast<double>(r.batch), value(r, c), !c.fits,
                               fmt::format("batch {} context {}: {:.4g}{}", r.batch, c.context, value(r, c),
                                           c.fits ? "" : " (does not fit)")});
    }
    panel.series.push_back(std::move(series));
  }
  return panel;
}

}  // namespace

void write_llm_svg(const LlmPlan& plan, const std::string& model_name, std::ostream& out) {
  const double width = 3 * kChartPanelWidth + 40, height = kChartPanelHeight + 30 + 18 * 4;
  out << fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' font-family='sans-serif'>\n", width, height);
  out << "<rect width='100%' height='100%' fill='white'/>\n";
  if (!plan.rows.empty()) {
    draw_chart_panel(plan_panel(plan, 0, "TTFT (ms, prefill)", [](const LlmBatchRow& r, const LlmContextRow&) { return r.ttft_ms; },
                                false, plan.options.ttft_slo_ms), out);
    draw_chart_panel(plan_panel(plan, kChartPanelWidth + 20, "TPOT (ms per token)",
                                [](const LlmBatchRow&, const LlmContextRow& c) { return c.tpot_ms; }, true, plan.options.tpot_slo_ms),
                     out);
    draw_chart_panel(plan_panel(plan, 2 * (kChartPanelWidth + 20), "tokens/s per device",
                                [](const LlmBatchRow&, const LlmContextRow& c) { return c.tokens_per_s_per_device; }, true,
                                std::nullopt),
                     out);
    const LlmBatchRow& first = plan.rows.front();
    for (size_t i = 0; i < first.contexts.size(); ++i)
      out << fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='12' fill='{}'>context {}</text>\n", kChartMargin + 110 * (i % 6),
                         kChartPanelHeight + 20 + 18 * (i / 6), chart_colour(i), first.contexts[i].context);
  }
  out << fmt::format("<text x='10' y='{:.0f}' font-size='11'>{} on {}, weights {}, activations {}, KV {}; hollow: does not fit</text>\n",
                     height - 10, svg_escape(model_name), svg_escape(plan.device->name), plan.weights_dtype, plan.act_dtype,
                     plan.kv_dtype);
  out << "</svg>\n";
}

}  // namespace modelcost
