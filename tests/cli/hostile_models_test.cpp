// Runs the CLI over every hostile graph of hostile_models.h in a child process: no signal, no
// run over 10 s of CPU time, peak RSS under 1 GB, and either a report (exit 0) or exactly one line
// `modelcost: error: ...` with an exit code of 2-6.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cli/cli_runner.h"
#include "cli/hostile_models.h"

namespace modelcost::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
// The limits hold for the release build; under ASan (shadow memory, redzones, quarantine, slower
// code) they are tripled. Time is the child's CPU time: on a shared machine the wall clock also
// counts the neighbours' work. A run is still killed once its wall time is six times the limit,
// which catches a hang that does not spin (a read that blocks).
constexpr double kTimeLimitSeconds = kSanitized ? 30 : 10;
constexpr double kWallLimitSeconds = 6 * kTimeLimitSeconds;
constexpr long kRssLimitKb = (kSanitized ? 3 : 1) * 1024 * 1024;

struct ChildRun {
  bool timed_out = false;
  int signal = 0;
  int code = -1;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system
  long peak_rss_kb = 0;
  std::string err;
};

// Runs modelcost on `model` with the reports written into `dir`, killed after the wall limit.
ChildRun run_child(const TempDir& dir, const std::string& model) {
  const std::string err_path = dir.file("stderr");
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
    const std::string csv = dir.file("out.csv"), json = dir.file("out.json");
    execl(MODELCOST_BINARY, MODELCOST_BINARY, model.c_str(), "--csv", csv.c_str(), "--json", json.c_str(),
          "--by-op", static_cast<char*>(nullptr));
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

void expect_clean(const std::string& name, const ChildRun& run) {
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

class HostileModels : public ::testing::TestWithParam<hostile::Case> {};

TEST_P(HostileModels, EndInAReportOrOneLineError) {
  TempDir dir;
  const hostile::Case& c = GetParam();
  const std::string path = dir.file(c.name + ".onnx");
  write_text(path, c.bytes);
  // MODELCOST_HOSTILE_OUT=DIR keeps the generated files (a seed corpus for the fuzz target).
  if (const char* keep = std::getenv("MODELCOST_HOSTILE_OUT")) write_text(std::string(keep) + "/" + c.name + ".onnx", c.bytes);
  const ChildRun run = run_child(dir, path);
  std::printf("%-36s exit %d  %.2f s CPU  %.2f s wall  %ld MB\n", c.name.c_str(), run.code, run.cpu_seconds, run.seconds,
              run.peak_rss_kb / 1024);
  expect_clean(c.name, run);
}

INSTANTIATE_TEST_SUITE_P(Generated, HostileModels, ::testing::ValuesIn(hostile::cases()),
                         [](const ::testing::TestParamInfo<hostile::Case>& info) { return info.param.name; });

// Every input the fuzz target once failed on, run by the release CLI under the same limits: a
// report or a one-line error, never a signal, more than the CPU time, or more than the memory.
class FuzzRegressions : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzRegressions, StayWithinTheLimits) {
  TempDir dir;
  const ChildRun run = run_child(dir, GetParam());
  std::printf("%-48s exit %d  %.2f s CPU  %ld MB\n", GetParam().c_str(), run.code, run.cpu_seconds, run.peak_rss_kb / 1024);
  expect_clean(GetParam(), run);
}

std::vector<std::string> regression_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(MODELCOST_SOURCE_DIR "/fuzz/regressions"))
    if (entry.path().extension() == ".onnx") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Corpus, FuzzRegressions, ::testing::ValuesIn(regression_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The weight's external data is a FIFO with no writer: opening it for reading would block forever.
TEST(ExternalData, IsNeverOpened) {
  TempDir dir;
  const std::string fifo = dir.file("weights.bin");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string path = dir.file("model.onnx");
  write_text(path, hostile::external_weight("weights.bin").bytes());
  const ChildRun run = run_child(dir, path);
  EXPECT_FALSE(run.timed_out) << "modelcost opened the external data file";
  EXPECT_EQ(run.code, 0) << run.err;
}

}  // namespace
}  // namespace modelcost::testing
