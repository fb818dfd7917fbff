// --html FILE: the whole report as one self-contained page (inline CSS, JavaScript and SVG; no
// network): totals, the extra sections (hardware, plan, comparison, measurement) as the terminal
// prints them, the roofline plot, a sortable per-node table and the per-op-type summary.
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
