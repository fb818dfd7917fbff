// draw_chart_panel (svg_chart.h).
#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cmath>

#include "report/number_format.h"

namespace modelcost {
namespace {

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"};

void draw_axes(const ChartPanel& panel, double max_value, const std::function<double(double)>& x,
               const std::function<double(double)>& y, std::ostream& out) {
  const double right = panel.left + kChartPanelWidth - 20;
  out << fmt::format("<text x='{:.0f}' y='25' font-size='14' text-anchor='middle'>{}</text>\n",
                     panel.left + kChartPanelWidth / 2, svg_escape(panel.title));
  out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='black'/>\n", panel.left + kChartMargin,
                     y(0), right);
  out << fmt::format("<line x1='{0:.1f}' y1='40' x2='{0:.1f}' y2='{1:.1f}' stroke='black'/>\n", panel.left + kChartMargin, y(0));
  for (int i = 0; i <= 4; ++i) {
    const double v = max_value * i / 4;
    out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10' text-anchor='end'>{}</text>\n", panel.left + kChartMargin - 4,
                       y(v) + 3, v >= 1000 ? human_count(v) : fmt::format("{:.3g}", v));
    if (i > 0)
      out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='#e6e6e6'/>\n",
                         panel.left + kChartMargin + 1, y(v), right);
  }
  if (panel.slo)
    out << fmt::format("<line x1='{0:.1f}' y1='{1:.1f}' x2='{2:.1f}' y2='{1:.1f}' stroke='#d62728' stroke-dasharray='6 4'/>\n"
                       "<text x='{2:.1f}' y='{3:.1f}' font-size='10' fill='#d62728' text-anchor='end'>SLO {4:.3g}</text>\n",
                       panel.left + kChartMargin, y(*panel.slo), right, y(*panel.slo) - 4, *panel.slo);
  for (double tick : panel.x_ticks)
    out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10' text-anchor='middle'>{:.3g}</text>\n", x(tick), y(0) + 14, tick);
  out << fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='middle'>{}</text>\n",
                     panel.left + kChartPanelWidth / 2, y(0) + 30, svg_escape(panel.x_label));
}

}  // namespace

const char* chart_colour(size_t series) { return kColours[series % (sizeof(kColours) / sizeof(kColours[0]))]; }

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

void draw_chart_panel(const ChartPanel& panel, std::ostream& out) {
  double min_x = 0, max_x = 0, max_value = 0;
  bool any = false;
  for (const ChartSeries& s : panel.series)
    for (const ChartPoint& p : s.points) {
      if (!(p.x > 0)) continue;
      min_x = any ? std::min(min_x, p.x) : p.x;
      max_x = any ? std::max(max_x, p.x) : p.x;
      max_value = std::max(max_value, p.y);
      any = true;
    }
  if (!any) return;
  if (panel.y_cap > 0) max_value = std::min(max_value, panel.y_cap);
  if (panel.slo) max_value = std::max(max_value, *panel.slo);
  max_value = max_value > 0 ? max_value * 1.1 : 1;
  const double lo = std::log(min_x), hi = std::log(max_x);
  auto x = [&](double v) {
    const double share = hi > lo ? (std::log(v) - lo) / (hi - lo) : 0.5;
    return panel.left + kChartMargin + share * (kChartPanelWidth - kChartMargin - 20);
  };
  auto y = [&](double v) { return 40 + (1 - std::min(v, max_value) / max_value) * (kChartPanelHeight - 80); };
  draw_axes(panel, max_value, x, y, out);
  for (const ChartSeries& s : panel.series) {
    std::string points;
    for (const ChartPoint& p : s.points)
      if (p.x > 0) points += fmt::format("{:.1f},{:.1f} ", x(p.x), y(p.y));
    out << fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n", s.colour, points);
    for (const ChartPoint& p : s.points)
      if (p.x > 0)
        out << fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3.5' fill='{}' stroke='{}'><title>{}</title></circle>\n", x(p.x),
                           y(p.y), p.hollow ? "white" : s.colour, s.colour, svg_escape(p.tooltip));
  }
}

}  // namespace modelcost
