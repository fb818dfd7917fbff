// Every report flag of every subcommand takes `-` for stdout: the report alone on stdout, no
// table, warnings on stderr, and two reports on stdout refused.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "report/report.h"

namespace modelcost::testing {
namespace {

std::string llm_export() { return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/llama_gqa_kv.onnx"; }

// `args` writes its report to `-` once and to a file once: stdout holds exactly the file.
void expect_stdout_is_the_file(const std::string& args_with_dash, const std::string& args_with_file,
                               const std::string& file, const std::string& starts_with) {
  const CliResult to_file = run_modelcost(args_with_file + " -q");
  ASSERT_EQ(to_file.code, 0) << to_file.err;
  const CliResult to_stdout = run_modelcost(args_with_dash);
  ASSERT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, read_text(file)) << args_with_dash;
  EXPECT_EQ(to_stdout.out.find(starts_with), 0u) << to_stdout.out.substr(0, 200);
}

TEST(ReportsOnStdout, MainCommandHtml) {
  TempDir dir;
  const std::string base = sample_model() + " --gpu h100";
  expect_stdout_is_the_file(base + " --html -", base + " --html " + dir.file("r.html"), dir.file("r.html"), "<!DOCTYPE html>");
}

TEST(ReportsOnStdout, MainCommandRooflineSvg) {
  TempDir dir;
  const std::string base = sample_model() + " --gpu h100";
  expect_stdout_is_the_file(base + " --roofline-svg -", base + " --roofline-svg " + dir.file("r.svg"), dir.file("r.svg"), "<?xml");
}

TEST(ReportsOnStdout, MainCommandGroupsCsv) {
  TempDir dir;
  const std::string base = sample_model() + " --gpu h100";
  expect_stdout_is_the_file(base + " --groups-csv -", base + " --groups-csv " + dir.file("g.csv"), dir.file("g.csv"), "");
  const CliResult r = run_modelcost(base + " --groups-csv -");
  EXPECT_EQ(r.out.find("Top"), std::string::npos) << "the table is left out";
}

TEST(ReportsOnStdout, LlmJsonCsvSvg) {
  TempDir dir;
  const std::string base = "llm " + llm_export() + " --gpu h100 --dtype fp16 --prompt 16 --generate 8 --batch 1,4";
  expect_stdout_is_the_file(base + " --json -", base + " --json " + dir.file("p.json"), dir.file("p.json"), "{");
  EXPECT_NO_THROW(Json::parse(read_text(dir.file("p.json"))));
  expect_stdout_is_the_file(base + " --csv -", base + " --csv " + dir.file("p.csv"), dir.file("p.csv"), "batch,context,");
  expect_stdout_is_the_file(base + " --svg -", base + " --svg " + dir.file("p.svg"), dir.file("p.svg"), "<svg");
  // Another report still goes to its file beside the one on stdout.
  const CliResult both = run_modelcost(base + " --json - --csv " + dir.file("q.csv"));
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NO_THROW(Json::parse(both.out));
  EXPECT_EQ(read_text(dir.file("q.csv")).find("batch,context,"), 0u);
}

TEST(ReportsOnStdout, TwoReportsOnStdoutAreAUsageError) {
  for (const std::string& args : {sample_model() + " --gpu h100 --html - --json -",
                                  sample_model() + " --gpu h100 --roofline-svg - --groups-csv -",
                                  "llm " + llm_export() + " --gpu h100 --json - --svg -"}) {
    const CliResult r = run_modelcost(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("both name standard output"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace modelcost::testing
