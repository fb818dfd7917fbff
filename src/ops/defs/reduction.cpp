// Op rules: reduction family. (Filled in below; see docs/ops/reduction.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_reduction_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
