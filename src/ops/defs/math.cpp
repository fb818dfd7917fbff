// Op rules: math family. (Filled in below; see docs/ops/math.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_math_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
