// The one place the Python package calls the C++ pipeline: the analysis the CLI runs for
// `modelcost MODEL [--dim ...] [--input ...] [--gpu ...] [--dtype ...] [--batch ...]`, returned as
// the JSON report's tree instead of printed.
#pragma once
#include <string>
#include <vector>

#include "report/report.h"

namespace modelcost {

struct PythonRequest {
  std::string model_path;
  std::vector<std::string> dims;    // "NAME=VALUE", as --dim
  std::vector<std::string> inputs;  // "NAME=1x3x224x224", as --input
  std::string gpus;                 // as --gpu ("" for none)
  std::string dtype;                // as --dtype
  std::string batches;              // as --batch ("1,8,32"); "" plans at the model's own batch
  std::vector<std::string> hwdb_dirs;  // as --hwdb
  // The package's copy of hwdb/, used where the built-in database is not found (an installed
  // package whose source tree is gone).
  std::string package_hwdb_dir;
};

// The report (docs/reports.md's JSON members). Throws Error with the CLI's one-line message
// (`<file>: <what>`) and exit code.
Json analyse_for_python(const PythonRequest& request);

}  // namespace modelcost
