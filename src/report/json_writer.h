// JSON report: model, totals, nodes, by_op_type, warnings, then any extra sections a later
// stage added (hardware, plan). docs/reports.md lists every field.
#pragma once
#include <ostream>

#include "report/report.h"

namespace modelcost {

Json report_json(const Report& report);
// Indented JSON; text that is not valid UTF-8 (odd node names) is replaced, never an error.
void write_json(const Report& report, std::ostream& out);

}  // namespace modelcost
