// The key of a group's measurement: two groups with the same key run the same kernels on
// same-shaped data, so the deployed measurement times the first and reuses its figure for the
// others (as the per-node measurement does for identical nodes).
#include <map>

#include "deployed/group_runner.h"

namespace modelcost::cuda {

std::string group_measurement_key(const GroupView& view, const std::string& implementation) {
  std::string key = view.group.pattern + "|" + view.group.label + "|" + implementation;
  std::map<size_t, size_t> position;  // member -> its place in the group
  std::map<int, size_t> external;     // tensor from outside -> first-seen ordinal
  for (size_t m : view.group.members) position.emplace(m, position.size());
  for (size_t m : view.group.members) {
    key += "|" + measurement_key(view.spec(m)) + " in";
    for (int t : view.node(m).inputs) {
      const int p = view.producer(t);
      if (t < 0) key += " -";
      else if (p >= 0) key += " m" + std::to_string(position.at(static_cast<size_t>(p)));
      else key += " e" + std::to_string(external.emplace(t, external.size()).first->second);
    }
    key += " out";
    for (int t : view.node(m).outputs) key += t < 0 ? " -" : view.is_output(t) ? " o" : " i";
  }
  return key;
}

}  // namespace modelcost::cuda
