// Runs the modelcost binary in a child process under the hostile-input limits: no signal, under
// 10 s of CPU time and 1 GB of peak RSS (tripled under ASan), and a report or exactly one line
// `modelcost: error: ...` with an exit code of 2-6. Header-only: tests/ builds *_test.cpp files only.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_runner.h"

namespace modelcost::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
// The limits hold for the release build; under ASan (shadow memory, redzones, quarantine, slower
// code) they are tripled. Time is the child's CPU time: on a shared machine the wall clock also
// counts the neighbours' work. A run is still killed once its wall time is six times the limit,
// which catches a hang that does not spin (a read that blocks).
inline constexpr double kTimeLimitSeconds = kSanitized ? 30 : 10;
inline constexpr double kWallLimitSeconds = 6 * kTimeLimitSeconds;
inline constexpr long kRssLimitKb = (kSanitized ? 3 : 1) * 1024 * 1024;

struct ChildRun {
  bool timed_out = false;
  int signal = 0;
  int code = -1;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system
  long peak_rss_kb = 0;
  std::string err;
};

// Runs modelcost with `args` (stdin and stdout on /dev/null), killed after the wall limit.
inline ChildRun run_child_args(const TempDir& dir, const std::vector<std::string>& args) {
  const std::string err_path = dir.file("stderr");
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
    std::vector<char*> argv = {const_cast<char*>(MODELCOST_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(MODELCOST_BINARY, argv.data());
    _exit(127);
  }
  ChildRun run;
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  struct rusage usage {};
  while (true) {
    const pid_t done = wait4(pid, &status, WNOHANG, &usage);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == pid) break;
    if (run.seconds > kWallLimitSeconds && !run.timed_out) {
      run.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.peak_rss_kb = usage.ru_maxrss;
  run.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  if (WIFSIGNALED(status) && !run.timed_out) run.signal = WTERMSIG(status);
  if (WIFEXITED(status)) run.code = WEXITSTATUS(status);
  run.err = read_text(err_path);
  return run;
}

// Runs modelcost on `model` with the CSV and JSON reports written into `dir`.
inline ChildRun run_child(const TempDir& dir, const std::string& model) {
  return run_child_args(dir, {model, "--csv", dir.file("out.csv"), "--json", dir.file("out.json"), "--by-op"});
}

// A report, or one `modelcost: error:` line with exit 2-6, within the time and memory limits.
inline void expect_clean(const std::string& name, const ChildRun& run) {
  SCOPED_TRACE(name);
  EXPECT_FALSE(run.timed_out) << "ran over " << kWallLimitSeconds << " s of wall time";
  EXPECT_LT(run.cpu_seconds, kTimeLimitSeconds) << "used " << run.cpu_seconds << " s of CPU time";
  EXPECT_EQ(run.signal, 0) << "killed by signal " << run.signal << ": " << run.err.substr(0, 2000);
  EXPECT_LT(run.peak_rss_kb, kRssLimitKb) << "peak RSS " << run.peak_rss_kb / 1024 << " MB";
  if (run.code == 0) return;
  EXPECT_GE(run.code, 2);
  EXPECT_LE(run.code, 6);
  EXPECT_EQ(run.err.rfind("modelcost: error: ", 0), 0u) << run.err.substr(0, 2000);
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "not one line: " << run.err.substr(0, 2000);
}

}  // namespace modelcost::testing
