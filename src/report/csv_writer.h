// Per-node CSV report: a header row of column names, then one row per top-level node in
// topological order. RFC 4180: CRLF line ends, fields with a comma, quote, CR or LF quoted.
#pragma once
#include <ostream>
#include <string>

#include "report/report.h"

namespace modelcost {

std::string csv_report_text(const Report& report);
void write_csv(const Report& report, std::ostream& out);
// RFC 4180 quoting of one field.
std::string csv_field(const std::string& text);

}  // namespace modelcost
