// Op rules: attention family. (Filled in below; see docs/ops/attention.md for the formulas.)
#include "ops/rule_helpers.h"

namespace modelcost {

void register_attention_ops(OpRegistry& r) {
  (void)r;
}

}  // namespace modelcost
