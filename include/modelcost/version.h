// The version --version prints and every report carries.
#pragma once

#ifndef MODELCOST_VERSION
#define MODELCOST_VERSION "0.1.0"  // keep in step with project(VERSION) in CMakeLists.txt
#endif

namespace modelcost {
constexpr const char* kModelcostVersion = MODELCOST_VERSION;
}  // namespace modelcost
