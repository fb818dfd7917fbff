#include "modelcost/diagnostics.h"

namespace modelcost {

void Diagnostics::warn_counted(const std::string& key, const std::string& example) {
  auto& entry = counted_[key];
  if (entry.first++ == 0) entry.second = example;
}

std::vector<std::string> Diagnostics::warnings() const {
  std::vector<std::string> all = warnings_;
  for (const auto& [key, entry] : counted_) {
    std::string line = key + " (" + std::to_string(entry.first) + (entry.first == 1 ? " node" : " nodes");
    if (!entry.second.empty()) line += ", e.g. " + entry.second;
    all.push_back(line + ")");
  }
  return all;
}

}  // namespace modelcost
