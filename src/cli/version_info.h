// What --version prints: the version, the git revision it was built from, and whether the CUDA
// module (needed by --measure, --gpu auto and calibrate) is there and loads.
#pragma once
#include <string>

namespace modelcost {

std::string version_text();

}  // namespace modelcost
