// SVG of the LLM plan against batch: TTFT (one line), TPOT and tokens/s per device (one line per
// decode context), with gridlines and the SLOs as dashed lines.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "report/llm_report.h"
#include "report/number_format.h"

namespace modelcost {
namespace {

constexpr double kPanelWidth = 420, kPanelHeight = 300, kMargin = 60;
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

struct Panel {
  double left = 0;
  std::string title;
  std::function<double(const LlmBatchRow&, const LlmContextRow&)> value;
  bool per_context = true;       // false: one line (the figure does not depend on the context)
  std::optional<double> slo;     // drawn as a dashed line
};

void draw_slo(const Panel& panel, double y_at, double right, std::ostream& out) {
  out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='#d62728' stroke-dasharray='6 4'/>\n"
                     "<text x='{2:.1f}' y='{3:.1f}' font-size='10' fill='#d62728' text-anchor='end'>SLO {4:.3g}</text>\n",
                     panel.left + kMargin, y_at, right, y_at - 4, *panel.slo);
}

// Log2 batch axis, linear value axis from 0.
void draw_panel(const LlmPlan& plan, const Panel& panel, std::ostream& out) {
  int64_t min_batch = plan.rows.front().batch, max_batch = min_batch;
  double max_value = 0;
  for (const LlmBatchRow& r : plan.rows) {
    min_batch = std::min(min_batch, r.batch);
    max_batch = std::max(max_batch, r.batch);
    for (const LlmContextRow& c : r.contexts) max_value = std::max(max_value, panel.value(r, c));
  }
  if (panel.slo) max_value = std::max(max_value, *panel.slo);
  max_value = max_value > 0 ? max_value * 1.1 : 1;
  const double lo = std::log2(static_cast<double>(min_batch)), hi = std::log2(static_cast<double>(max_batch));
  auto x = [&](int64_t b) {
    const double span = hi > lo ? hi - lo : 1;
    return panel.left + kMargin + (hi > lo ? (std::log2(static_cast<double>(b)) - lo) / span : 0.5) * (kPanelWidth - kMargin - 20);
  };
  auto y = [&](double v) { return 40 + (1 - v / max_value) * (kPanelHeight - 80); };
  out << fmt::format("<text x='{:.0f}' y='25' font-size='14' text-anchor='middle'>{}</text>\n",
                     panel.left + kPanelWidth / 2, escape(panel.title));
  out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='black'/>\n", panel.left + kMargin,
                     y(0), panel.left + kPanelWidth - 20);
  out << fmt::format("<line x1='{0:.1f}' y1='40' x2='{0:.1f}' y2='{1:.1f}' stroke='black'/>\n", panel.left + kMargin, y(0));
  for (int i = 0; i <= 4; ++i) {
    const double v = max_value * i / 4;
    out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10' text-anchor='end'>{}</text>\n", panel.left + kMargin - 4,
                       y(v) + 3, v >= 1000 ? human_count(v) : fmt::format("{:.3g}", v));
    if (i > 0)
      out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='#e6e6e6'/>\n", panel.left + kMargin + 1,
                         y(v), panel.left + kPanelWidth - 20);
  }
  if (panel.slo) draw_slo(panel, y(*panel.slo), panel.left + kPanelWidth - 20, out);
  for (const LlmBatchRow& r : plan.rows)
    out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10' text-anchor='middle'>{}</text>\n", x(r.batch), y(0) + 14, r.batch);
  out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='middle'>batch</text>\n",
                     panel.left + kPanelWidth / 2, y(0) + 30);
  const size_t contexts = panel.per_context ? plan.rows.front().contexts.size() : std::min<size_t>(1, plan.rows.front().contexts.size());
  for (size_t i = 0; i < contexts; ++i) {
    const char* colour = panel.per_context ? kColours[i % (sizeof(kColours) / sizeof(kColours[0]))] : "#333";
    std::string points;
    for (const LlmBatchRow& r : plan.rows)
      if (i < r.contexts.size()) points += fmt::format("{:.1f},{:.1f} ", x(r.batch), y(panel.value(r, r.contexts[i])));
    out << fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n", colour, points);
    for (const LlmBatchRow& r : plan.rows) {
      if (i >= r.contexts.size()) continue;
      const LlmContextRow& c = r.contexts[i];
      out << fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3.5' fill='{}' stroke='{}'><title>batch {} context {}: "
                         "{:.4g}{}</title></circle>\n", x(r.batch), y(panel.value(r, c)), c.fits ? colour : "white", colour,
                         r.batch, c.context, panel.value(r, c), c.fits ? "" : " (does not fit)");
    }
  }
}

}  // namespace

void write_llm_svg(const LlmPlan& plan, const std::string& model_name, std::ostream& out) {
  const double width = 3 * kPanelWidth + 40, height = kPanelHeight + 30 + 18 * 4;
  out << fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' font-family='sans-serif'>\n", width, height);
  out << "<rect width='100%' height='100%' fill='white'/>\n";
  if (!plan.rows.empty()) {
    draw_panel(plan, {0, "TTFT (ms, prefill)", [](const LlmBatchRow& r, const LlmContextRow&) { return r.ttft_ms; }, false,
                      plan.options.ttft_slo_ms}, out);
    draw_panel(plan, {kPanelWidth + 20, "TPOT (ms per token)", [](const LlmBatchRow&, const LlmContextRow& c) { return c.tpot_ms; },
                      true, plan.options.tpot_slo_ms}, out);
    draw_panel(plan, {2 * (kPanelWidth + 20), "tokens/s per device",
                      [](const LlmBatchRow&, const LlmContextRow& c) { return c.tokens_per_s_per_device; }, true, std::nullopt}, out);
    const LlmBatchRow& first = plan.rows.front();
    for (size_t i = 0; i < first.contexts.size(); ++i)
      out << fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='12' fill='{}'>context {}</text>\n", kMargin + 110 * (i % 6),
                         kPanelHeight + 20 + 18 * (i / 6), kColours[i % (sizeof(kColours) / sizeof(kColours[0]))],
                         first.contexts[i].context);
  }
  out << fmt::format("<text x='10' y='{:.0f}' font-size='11'>{} on {}, weights {}, activations {}, KV {}; hollow: does not fit</text>\n",
                     height - 10, escape(model_name), escape(plan.device->name), plan.weights_dtype, plan.act_dtype, plan.kv_dtype);
  out << "</svg>\n";
}

}  // namespace modelcost
