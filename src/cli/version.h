// The version --version prints and every report carries (include/modelcost/version.h).
#pragma once
#include "modelcost/version.h"
