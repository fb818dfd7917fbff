// The command line: parses options, runs the pipeline stages in order, writes the reports.
#pragma once
#include <ostream>

namespace modelcost {

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace modelcost
