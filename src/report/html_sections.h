// The report's extra sections (device, plan, comparison, fused kernels, modules, measurement) as
// HTML tables built from their JSON members: lists of records become sortable tables, records
// become two-column tables.
#pragma once
#include <ostream>
#include <string>

#include "report/report.h"

namespace modelcost {

std::string html_escape(const std::string& text);

// Every section the terminal prints, as tables (`plans` replaces `plan` when there are several devices).
void write_html_sections(const Report& report, std::ostream& out);

}  // namespace modelcost
