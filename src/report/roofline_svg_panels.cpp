// Several devices' roofline plots in one SVG document, and the plot written to a file.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "modelcost/errors.h"
#include "report/roofline_svg.h"

namespace modelcost {

std::string render_roofline_svg_panels(const std::vector<RooflineSvgPanel>& panels, const Analysis& analysis) {
  if (panels.size() == 1) return render_roofline_svg(*panels[0].report, analysis, panels[0].options);
  // One range for every panel: the union of each one's own.
  RooflineSvgAxes shared = roofline_svg_axes(*panels[0].report, analysis, panels[0].options);
  for (const auto& p : panels) {
    const RooflineSvgAxes own = roofline_svg_axes(*p.report, analysis, p.options);
    shared = {std::min(shared.x_lo, own.x_lo), std::max(shared.x_hi, own.x_hi), std::min(shared.y_lo, own.y_lo),
              std::max(shared.y_hi, own.y_hi)};
  }
  double width = 0, height = 0;
  for (const auto& p : panels) width = std::max<double>(width, p.options.width), height += p.options.height;
  std::string s = fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">
)", width, height);
  double y = 0;
  for (const auto& p : panels) {
    RooflineSvgOptions options = p.options;
    options.shared_axes = shared;
    std::string inner = render_roofline_svg(*p.report, analysis, options);
    inner.erase(0, inner.find("<svg"));  // drop the XML declaration: a nested <svg> is an element
    inner.insert(4, fmt::format(" x=\"0\" y=\"{}\"", y));
    s += inner;
    y += p.options.height;
  }
  return s + "</svg>\n";
}

void write_roofline_svg(const std::string& path, const RooflineReport& report, const Analysis& analysis,
                        const RooflineSvgOptions& options) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(kExitUnreadable, "cannot write the roofline SVG '" + path + "'");
  out << render_roofline_svg(report, analysis, options);
  if (!out) throw Error(kExitUnreadable, "cannot write the roofline SVG '" + path + "'");
}

}  // namespace modelcost
