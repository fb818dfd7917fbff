// What every fuzz target shares: scratch files per process, and the verdict on one run of the
// command line (a report, or a `modelcost: error:` line with exit 2-6 and nothing else).
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace modelcost::fuzzing {

// Paths under $TMPDIR (default /tmp) named after the process, so parallel jobs do not collide.
inline std::string scratch_path(const std::string& suffix) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/modelcost-fuzz-" + std::to_string(getpid()) + suffix;
}

inline void write_file(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}

// Runs the CLI on `args` (without the program name) and aborts, for the fuzzer to keep the input,
// unless it ends in a report or one clean error line. An "internal error" (an exception no stage
// meant to throw) or "out of memory" is a failure too. Only the CLI's own verdict lines count: a
// mutated name echoed in a warning may contain any text.
inline void run_cli_expecting_a_clean_end(std::vector<std::string> args) {
  std::vector<char*> argv;
  static char name[] = "modelcost";
  argv.push_back(name);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  const int code = modelcost::run_app(static_cast<int>(argv.size() - 1), argv.data(), out, err);
  const std::string message = err.str();
  const bool clean_failure = code >= 2 && code <= 6 && message.rfind("modelcost: error: ", 0) == 0 &&
                             message.find('\n') == message.size() - 1;
  bool internal = false;  // a line that starts with one of these verdicts, not a name that holds one
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);)
    internal = internal || line.rfind("modelcost: error: internal error", 0) == 0 ||
               line.rfind("modelcost: error: out of memory", 0) == 0;
  if ((code != 0 && !clean_failure) || internal) {
    std::fprintf(stderr, "fuzz: exit %d with stderr: %s\n", code, message.c_str());
    std::abort();
  }
}

}  // namespace modelcost::fuzzing
