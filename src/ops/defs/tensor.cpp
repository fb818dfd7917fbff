// Op rules: tensor family. (Filled in below; see docs/ops/tensor.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_tensor_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
