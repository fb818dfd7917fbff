// The one place the Python package calls the C++ pipeline: the analysis the CLI runs for
// `modelcost MODEL [options]`, returned as the JSON report's tree instead of printed. The options
// are the command line's own (the Python layer spells each keyword as its option).
#pragma once
#include <string>
#include <vector>

#include "report/report.h"

namespace modelcost {

struct PythonRequest {
  std::vector<std::string> args;  // as after `modelcost`: MODEL --gpu a100 --batch 1,8 ...
  // The package's copy of hwdb/, used where the built-in database is not found (an installed
  // package whose source tree is gone).
  std::string package_hwdb_dir;
};

// The report (docs/reports.md's JSON members). Throws Error with the CLI's one-line message
// (`<file>: <what>`) and exit code.
Json analyse_for_python(const PythonRequest& request);

}  // namespace modelcost
