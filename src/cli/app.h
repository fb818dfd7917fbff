// The command line: parses options, runs the pipeline stages in order, writes the reports.
#pragma once
#include <ostream>
#include <string>
#include <vector>

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
// The same with the arguments that follow the program name: how the Python package runs `diff`,
// `llm`, `calibrate` and the HTML report, so they behave exactly as on the command line.
int run_app(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `modelcost MODEL [options]`'s options from `args` (what follows the program name), as the
// command line parses them (dtype aliases included). Throws Error(kExitUsage) for a bad one.
CliOptions parse_analysis_options(const std::vector<std::string>& args);

}  // namespace modelcost
