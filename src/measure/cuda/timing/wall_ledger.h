// Where a measurement's wall time goes: seconds per phase (backend start, runner preparation
// and timed choices, sampling, graph capture and replays), and counts (nodes sampled, how their
// sampling stopped, samples taken), summed over the ledger's life. Each backend keeps one (its
// Timing, timing.h), so two backends' figures never mix. Phases nest: a timed choice inside a
// runner's preparation counts in both. Backend::wall_breakdown() returns it.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace modelcost::cuda {

class WallLedger {
 public:
  void add(const std::string& entry, double value);
  // Entries in first-seen order; seconds for phases, plain numbers for counts ("... (count)").
  std::vector<std::pair<std::string, double>> entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

// Adds the seconds from construction to destruction to `phase` of `ledger` (which outlives it).
class LedgerScope {
 public:
  LedgerScope(WallLedger& ledger, const char* phase)
      : ledger_(ledger), phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~LedgerScope() { ledger_.add(phase_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()); }
  LedgerScope(const LedgerScope&) = delete;
  LedgerScope& operator=(const LedgerScope&) = delete;

 private:
  WallLedger& ledger_;
  const char* phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace modelcost::cuda
