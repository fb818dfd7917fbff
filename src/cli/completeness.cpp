#include "cli/completeness.h"

#include "costs/cost_model.h"
#include "modelcost/errors.h"

namespace modelcost {

void check_completeness(const Analysis& analysis, const OpRegistry& registry, bool strict, std::ostream& err) {
  const Totals& t = analysis.totals;
  if (strict && t.unshaped_nodes > 0)
    throw Error(kExitUnsupported, "--strict: " + describe_unshaped(analysis, registry));
  if (strict && t.uncosted_nodes > 0)
    throw Error(kExitUnsupported, "--strict: " + std::to_string(t.uncosted_nodes) +
                                      " node(s) have no cost rule (see the warnings; declare them with --ops FILE)");
  if (t.unshaped_nodes == 0) return;
  // A model whose MAC-carrying nodes all sit downstream of an unknown op would read as free.
  if (t.macs == 0)
    throw Error(kExitUnsupported, "no MACs could be counted: " + describe_unshaped(analysis, registry));
  err << "modelcost: warning: " << describe_unshaped(analysis, registry) << std::endl;
}

}  // namespace modelcost
