// A one-line progress bar on stderr for the measurement pass; silent when stderr is not a terminal.
#pragma once
#include <cstddef>
#include <string>

namespace modelcost {

class ProgressBar {
 public:
  explicit ProgressBar(const std::string& label);
  ~ProgressBar();
  void update(size_t done, size_t total, const std::string& item);

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace modelcost
