#include "timing/wall_ledger.h"

namespace modelcost::cuda {

void WallLedger::add(const std::string& entry, double value) {
  for (auto& [name, total] : entries_)
    if (name == entry) {
      total += value;
      return;
    }
  entries_.emplace_back(entry, value);
}

}  // namespace modelcost::cuda
