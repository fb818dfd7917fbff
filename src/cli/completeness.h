// What the CLI does when part of the model could not be analysed (unknown ops, missing shapes):
// never a silent zero. A loud warning with the share left out; an error under --strict or when
// nothing with MACs could be counted.
#pragma once
#include <ostream>

#include "modelcost/analysis.h"

namespace modelcost {

class OpRegistry;

// Throws Error(kExitUnsupported) under `strict` when any node is unshaped or of an unknown op,
// and always when nodes are unshaped and the counted MACs are zero; otherwise prints
// "modelcost: warning: ..." on `err` for unshaped nodes.
void check_completeness(const Analysis& analysis, const OpRegistry& registry, bool strict, std::ostream& err);

}  // namespace modelcost
