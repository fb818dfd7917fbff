// Report destinations: `--json -` and `--csv -` put the report on stdout, alone.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "report/report.h"

namespace modelcost::testing {
namespace {

TEST(CliReportFiles, JsonDashWritesTheSameReportToStdout) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  const CliResult to_file = run_modelcost(sample_model() + " --dim batch=1 -q --json " + path);
  ASSERT_EQ(to_file.code, 0) << to_file.err;
  const CliResult to_stdout = run_modelcost(sample_model() + " --dim batch=1 --json -");
  ASSERT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, read_text(path));  // no terminal table around it
  EXPECT_EQ(Json::parse(to_stdout.out)["totals"]["macs"], 4089184256);
  EXPECT_TRUE(to_stdout.err.empty()) << to_stdout.err;
}

TEST(CliReportFiles, CsvDashWritesTheSameReportToStdout) {
  TempDir dir;
  const std::string path = dir.file("r.csv");
  const CliResult to_file = run_modelcost(sample_model() + " -q --csv " + path);
  ASSERT_EQ(to_file.code, 0) << to_file.err;
  const CliResult to_stdout = run_modelcost(sample_model() + " --csv - --top 3");
  ASSERT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, read_text(path));
  EXPECT_EQ(to_stdout.out.rfind("name,op_type,", 0), 0u);
}

TEST(CliReportFiles, OneReportOnStdoutTheOtherInAFile) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  const CliResult r = run_modelcost(sample_model() + " --csv - --json " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("name,op_type,", 0), 0u);
  EXPECT_EQ(Json::parse(read_text(path))["totals"]["macs"], 4089184256);
}

TEST(CliReportFiles, WarningsGoToStderrWhenTheReportIsOnStdout) {
  ModelBuilder b;
  b.input("x", kFloat, std::vector<std::string>{"batch", "width"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  TempDir dir;
  const std::string model = write_model(dir, "dims.onnx", b);
  CliResult r = run_modelcost(model + " --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW(Json::parse(r.out));
  EXPECT_NE(r.err.find("modelcost: warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("batch"), std::string::npos) << r.err;
  r = run_modelcost(model + " --json - -q");  // --quiet keeps the report, drops the warnings
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW(Json::parse(r.out));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliReportFiles, BothReportsOnStdoutIsAUsageError) {
  const CliResult r = run_modelcost(sample_model() + " --csv - --json -");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("modelcost: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace modelcost::testing
