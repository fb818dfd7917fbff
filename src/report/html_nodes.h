// The per-node table of the HTML report. Nodes are ranked by the report's cost column (predicted
// time with a device, else FLOPs), zero-cost layout nodes (no FLOPs, no bytes: Identity, Reshape,
// ...) last and hidden until asked for. Only the top rows are HTML; every row is embedded as compact
// JSON that the page renders on demand (sort, filter, "show more"), so a 20,000-node model's page
// stays small and opens fast.
#pragma once
#include <ostream>

#include "report/report.h"

namespace modelcost {

void write_html_nodes(const Report& report, std::ostream& out);

// The page script that sorts, filters and pages that table (and sorts the other sortable tables).
const char* html_nodes_script();

}  // namespace modelcost
