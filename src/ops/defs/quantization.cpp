// Op rules: quantization family. (Filled in below; see docs/ops/quantization.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_quantization_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
