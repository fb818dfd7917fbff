// --html FILE: the whole report as one self-contained page (inline CSS, JavaScript and SVG; no
// network): totals, the extra sections (device, plan, comparison, fused kernels, modules,
// measurement) as tables, the roofline plot, the per-node table (heaviest first, rendered on
// demand: html_nodes.h) and the per-op-type summary.
#pragma once
#include <ostream>
#include <string>

#include "report/report.h"

namespace modelcost {

struct HtmlOptions {
  std::string roofline_svg;  // an <svg> document to show inline, or "" for none
};

void write_html(const Report& report, const HtmlOptions& options, std::ostream& out);

}  // namespace modelcost
