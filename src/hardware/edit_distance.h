// How far apart two names are, for "did you mean" hints (device names, command-line options).
#pragma once
#include <cstddef>
#include <string>

namespace modelcost {

// Levenshtein distance: single-character insertions, deletions and substitutions.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace modelcost
