// The command line: parses options, runs the pipeline stages in order, writes the reports.
#pragma once
#include <ostream>
#include <string>

#include "cli/options.h"
#include "report/report.h"

namespace modelcost {

// `<file>: <what>` on one line (what follows "modelcost: error: "): messages from the stages that
// already name a file the user gave keep it; the others get the model's path.
std::string one_line_error(const CliOptions& options, std::string message);

// What `modelcost MODEL ...` analyses (load, shapes, costs, fusion, hardware, plan), returned as
// the JSON report's tree instead of printed: the one entry the Python package calls. Warnings go
// to `err`; errors throw Error as for the command line.
Json analysis_report(const CliOptions& options, std::ostream& err);

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace modelcost
