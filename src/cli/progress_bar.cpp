#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace modelcost {

ProgressBar::ProgressBar(const std::string& label) : label_(label), enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void ProgressBar::update(size_t done, size_t total, const std::string& item) {
  if (!enabled_ || total == 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %zu/%zu %.40s", label_.c_str(), bar.c_str(), done, total, item.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace modelcost
