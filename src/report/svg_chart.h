// A panel of an SVG line chart, shared by the LLM plan's chart (against batch) and the serving
// simulation's (against the request rate): a log x axis, a linear y axis from 0, one polyline per
// series with a circle at each point (hollow where the point is flagged), an optional dashed SLO.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace modelcost {

inline constexpr double kChartPanelWidth = 420, kChartPanelHeight = 300, kChartMargin = 60;

// The series colours, in order.
const char* chart_colour(size_t series);
std::string svg_escape(const std::string& text);

struct ChartPoint {
  double x = 0, y = 0;
  bool hollow = false;   // drawn white inside: a point that does not hold (does not fit, saturated)
  std::string tooltip;
};

struct ChartSeries {
  std::string colour;
  std::vector<ChartPoint> points;
};

struct ChartPanel {
  double left = 0;                // x of the panel's left edge
  std::string title, x_label;
  std::vector<double> x_ticks;    // labelled on the x axis
  std::vector<ChartSeries> series;
  std::optional<double> slo;      // a dashed horizontal line
  double y_cap = 0;               // > 0: the y axis stops there and points above it sit on it
};

void draw_chart_panel(const ChartPanel& panel, std::ostream& out);

}  // namespace modelcost
