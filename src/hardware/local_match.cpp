#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "modelcost/hardware.h"

namespace modelcost {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Tokens that name a GPU model: contain a digit and a letter ("h100", "a100", "l40s", "4090"),
// not memory sizes ("80gb") or generic words ("nvidia", "hbm3").
std::vector<std::string> model_tokens(const std::string& name) {
  std::vector<std::string> tokens;
  std::istringstream in(lower(name));
  std::string t;
  while (in >> t) {
    const bool digit = std::any_of(t.begin(), t.end(), ::isdigit);
    const bool is_size = t.size() > 2 && t.compare(t.size() - 2, 2, "gb") == 0;
    if (digit && !is_size && t.rfind("hbm", 0) != 0 && t.rfind("gddr", 0) != 0) tokens.push_back(t);
  }
  return tokens;
}

}  // namespace

const Device* match_local_device(const HardwareDb& db, const std::string& gpu_name, int sm_count, double memory_gb) {
  const auto wanted = model_tokens(gpu_name);
  const Device* best = nullptr;
  double best_score = -1;
  for (const Device& d : db.devices()) {
    if (d.kind != "gpu") continue;
    std::string names = lower(d.id + " " + d.name);
    for (const auto& a : d.aliases) names += " " + lower(a);
    bool shares = false;
    for (const auto& t : wanted) shares = shares || names.find(t) != std::string::npos;
    if (!shares) continue;
    double score = 1;
    if (sm_count > 0 && d.compute_units == sm_count) score += 2;
    if (memory_gb > 0 && d.memory_gb > 0) score += 1 / (1 + std::fabs(d.memory_gb - memory_gb));
    if (score > best_score) {
      best_score = score;
      best = &d;
    }
  }
  return best;
}

}  // namespace modelcost
