// Op rules: com_microsoft family. (Filled in below; see docs/ops/com_microsoft.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_com_microsoft_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
