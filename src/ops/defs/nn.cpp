// Op rules: nn family. (Filled in below; see docs/ops/nn.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_nn_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
