// Op rules: controlflow family. (Filled in below; see docs/ops/controlflow.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_controlflow_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
