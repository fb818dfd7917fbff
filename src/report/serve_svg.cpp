// SVG of a serving simulation against the request rate: TTFT and TPOT (P50 and P99) and output
// tokens per second, one point per simulated rate, hollow where the queue kept growing.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "report/serve_report.h"
#include "report/svg_chart.h"

namespace modelcost {
namespace {

using Figure = std::function<double(const ServeResult&)>;

struct Line {
  const char* name;
  Figure value;
};

// Saturated points' latencies grow with the requests simulated: the axis stops at three times the
// highest figure of a rate that was served, and those points sit on it.
ChartPanel rate_panel(const std::vector<RatePoint>& points, double left, const std::string& title, const std::vector<Line>& lines,
                      bool cap_saturated) {
  ChartPanel panel;
  panel.left = left;
  panel.title = title;
  panel.x_label = "requests/s offered";
  for (size_t i = 0; i < points.size(); i += 2) panel.x_ticks.push_back(points[i].rate);
  double served_max = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    ChartSeries series{chart_colour(l), {}};
    for (const RatePoint& p : points) {
      const double v = lines[l].value(p.result);
      if (!p.result.saturated) served_max = std::max(served_max, v);
      series.points.push_back({p.rate, v, p.result.saturated,
                               fmt::format("{:.4g} requests/s: {} {:.4g}{}", p.rate, lines[l].name, v,
                                           p.result.saturated ? " (saturated)" : "")});
    }
    panel.series.push_back(std::move(series));
  }
  if (cap_saturated && served_max > 0) panel.y_cap = 3 * served_max;
  return panel;
}

}  // namespace

void write_serve_svg(const ServeRunInfo& info, const std::vector<RatePoint>& points, std::ostream& out) {
  const double width = 3 * kChartPanelWidth + 40, height = kChartPanelHeight + 30 + 18 * 2;
  out << fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' font-family='sans-serif'>\n", width, height);
  out << "<rect width='100%' height='100%' fill='white'/>\n";
  const Line ttft[] = {{"P50 TTFT ms", [](const ServeResult& r) { return r.ttft_ms.p50; }},
                       {"P99 TTFT ms", [](const ServeResult& r) { return r.ttft_ms.p99; }}};
  const Line tpot[] = {{"P50 TPOT ms", [](const ServeResult& r) { return r.tpot_ms.p50; }},
                       {"P99 TPOT ms", [](const ServeResult& r) { return r.tpot_ms.p99; }}};
  const Line tokens[] = {{"output tokens/s", [](const ServeResult& r) { return r.output_tokens_per_s; }}};
  draw_chart_panel(rate_panel(points, 0, "TTFT (ms)", {std::begin(ttft), std::end(ttft)}, true), out);
  draw_chart_panel(rate_panel(points, kChartPanelWidth + 20, "TPOT (ms per token)", {std::begin(tpot), std::end(tpot)}, true), out);
  draw_chart_panel(rate_panel(points, 2 * (kChartPanelWidth + 20), "output tokens/s", {std::begin(tokens), std::end(tokens)}, false),
                   out);
  out << fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='12' fill='{}'>P50</text>\n", kChartMargin, kChartPanelHeight + 20,
                     chart_colour(0));
  out << fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='12' fill='{}'>P99</text>\n", kChartMargin + 60, kChartPanelHeight + 20,
                     chart_colour(1));
  out << fmt::format("<text x='10' y='{:.0f}' font-size='11'>{} on {} (TP {}, PP {}), {} scheduler; {}; hollow: saturated (the "
                     "queue kept growing)</text>\n",
                     height - 10, svg_escape(info.model), svg_escape(info.device), info.tensor_parallel, info.pipeline_stages,
                     scheduler_name(info.scheduler.kind), svg_escape(info.workload));
  out << "</svg>\n";
}

}  // namespace modelcost
