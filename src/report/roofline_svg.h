// --roofline-svg FILE: a self-contained SVG of one roofline report (log-log; one roof per math
// path and dtype used; one mark per costed node, coloured by bound, the node name on hover; the
// heaviest nodes numbered and listed).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/roofline.h"

namespace modelcost {

// A node's measured place on the plot (from --measure, and --counters for the intensity).
struct MeasuredPoint {
  bool present = false;
  double intensity = 0;       // FLOP/byte: measured (counters) or the analytic one
  double achieved_flops = 0;  // FLOP/s: the node's FLOPs over its measured median time
  bool measured_intensity = false;
};

// A plot's axes, in decades (log10) of intensity (x) and FLOP/s (y).
struct RooflineSvgAxes {
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
};

struct RooflineSvgOptions {
  // Set: the plot spans at least these axes (panels of several devices share one range, so their
  // marks compare by eye).
  std::optional<RooflineSvgAxes> shared_axes;
  int width = 1100;
  int height = 680;
  size_t annotate_top = 10;  // the heaviest nodes by predicted time get a number and a legend line
  // Parallel to the report's nodes, or empty: each present point is drawn as a hollow mark joined
  // to the node's predicted mark.
  std::vector<MeasuredPoint> measured;
};

std::string render_roofline_svg(const RooflineReport& report, const Analysis& analysis,
                                const RooflineSvgOptions& options = {});

// The axes render_roofline_svg would draw.
RooflineSvgAxes roofline_svg_axes(const RooflineReport& report, const Analysis& analysis, const RooflineSvgOptions& options = {});

// Several devices (--gpu a,b,c): one plot per device, stacked in one SVG document, on one shared range.

struct RooflineSvgPanel {
  const RooflineReport* report = nullptr;
  RooflineSvgOptions options;
};
std::string render_roofline_svg_panels(const std::vector<RooflineSvgPanel>& panels, const Analysis& analysis);

// Throws Error (kExitUnreadable) when the file cannot be written.
void write_roofline_svg(const std::string& path, const RooflineReport& report, const Analysis& analysis,
                        const RooflineSvgOptions& options = {});

}  // namespace modelcost
