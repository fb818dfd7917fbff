// --roofline-svg FILE: a self-contained SVG of one roofline report (log-log; one roof per math
// path and dtype used; one mark per costed node, coloured by bound, the node name on hover; the
// heaviest nodes numbered and listed).
#pragma once
#include <cstddef>
#include <string>

#include "modelcost/analysis.h"
#include "modelcost/roofline.h"

namespace modelcost {

struct RooflineSvgOptions {
  int width = 1100;
  int height = 680;
  size_t annotate_top = 10;  // the heaviest nodes by predicted time get a number and a legend line
};

std::string render_roofline_svg(const RooflineReport& report, const Analysis& analysis,
                                const RooflineSvgOptions& options = {});

// Throws Error (kExitUnreadable) when the file cannot be written.
void write_roofline_svg(const std::string& path, const RooflineReport& report, const Analysis& analysis,
                        const RooflineSvgOptions& options = {});

}  // namespace modelcost
