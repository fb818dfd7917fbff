// JSON report: model, totals, nodes, by_op_type, warnings, then any extra sections a later
// stage added (hardware, plan). docs/reports.md lists every field.
#pragma once
#include <ostream>
#include <string>

#include "report/report.h"

namespace modelcost {

// The report as a tree (for callers that read it, such as the Python package).
Json report_json(const Report& report);
// Indented JSON; text that is not valid UTF-8 (odd node names) is replaced, never an error.
// Written straight from the columns, without a tree (docs/reports.md shows the layout).
std::string json_report_text(const Report& report);
void write_json(const Report& report, std::ostream& out);

}  // namespace modelcost
