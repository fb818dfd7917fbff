// Runs the CLI over every hostile graph of hostile_models.h in a child process: no signal, no
// run over 10 s of CPU time, peak RSS under 1 GB, and either a report (exit 0) or exactly one line
// `modelcost: error: ...` with an exit code of 2-6 (child_run.h).
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

#include "cli/child_run.h"
#include "cli/hostile_models.h"

namespace modelcost::testing {
namespace {

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
