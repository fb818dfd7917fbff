// The command line: parses options, runs the pipeline stages in order, writes the reports.
#pragma once
#include <ostream>
#include <string>

#include "cli/options.h"

namespace modelcost {

// `<file>: <what>` on one line (what follows "modelcost: error: "): messages from the stages that
// already name a file the user gave keep it; the others get the model's path.
std::string one_line_error(const CliOptions& options, std::string message);

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace modelcost
