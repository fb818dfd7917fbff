// The CPU measuring backend: times the reference kernels on this machine's CPU (--measure --cpu).
#pragma once
#include <memory>

#include "modelcost/measure.h"

namespace modelcost {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace modelcost
