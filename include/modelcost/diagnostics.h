// Warnings gathered along the pipeline; every report prints them.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace modelcost {

class Diagnostics {
 public:
  void warn(const std::string& message) { warnings_.push_back(message); }
  // Repeated warnings of one kind (e.g. one per unknown op) are folded into one line with a count.
  void warn_counted(const std::string& key, const std::string& example);
  std::vector<std::string> warnings() const;

 private:
  std::vector<std::string> warnings_;
  std::map<std::string, std::pair<int, std::string>> counted_;
};

}  // namespace modelcost
