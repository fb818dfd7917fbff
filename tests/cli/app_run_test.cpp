// The command line on real models: options reach the stages and the reports agree.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/cli_runner.h"
#include "cli/version.h"
#include "report/report.h"
#include "report/report_fixtures.h"

namespace modelcost::testing {
namespace {

std::string resnet50() { return shared_model("resnet50_op13.onnx"); }

TEST(CliRun, PrintsTheTerminalReport) {
  const CliResult r = run_modelcost(sample_model());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find(std::string("modelcost ") + kModelcostVersion + ": " + sample_model()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nTotals\n"), std::string::npos);
  EXPECT_NE(r.out.find("params              25.5 M"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("By op type"), std::string::npos);
}

TEST(CliRun, VersionAndHelp) {
  CliResult r = run_modelcost("--version");
  EXPECT_EQ(r.code, 0);
  // The version, the git revision, and the CUDA module's state, which a GPU run needs.
  EXPECT_EQ(r.out.rfind(std::string("modelcost ") + kModelcostVersion + " (git ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nCUDA module: "), std::string::npos) << r.out;
  r = run_modelcost("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* option : {"--dim", "--input", "--top", "--csv", "--json", "--by-op", "--quiet", "--version"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

TEST(CliRun, UnsetSymbolicDimsWarnWithTheirNames) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const std::string json_path = dir.file("r.json");
  const CliResult r = run_modelcost(resnet50() + " --json " + json_path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("symbolic dims not set, using 1: batch"), std::string::npos) << r.out;
  const Json json = Json::parse(read_text(json_path));
  bool warned = false;
  for (const auto& w : json["warnings"]) warned |= w.get<std::string>().find("using 1: batch") != std::string::npos;
  EXPECT_TRUE(warned) << json["warnings"].dump();
  EXPECT_EQ(json["model"]["inputs"][0]["shape"], Json::parse("[1,3,224,224]"));
}

TEST(CliRun, DimBatch8ScalesTheModel) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const std::string one = dir.file("b1.json"), eight = dir.file("b8.json");
  CliResult r = run_modelcost(resnet50() + " --dim batch=1 --quiet --json " + one);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run_modelcost("--dim batch=8 " + resnet50() + " -q --json " + eight);  // options before the model too
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j1 = Json::parse(read_text(one)), j8 = Json::parse(read_text(eight));
  EXPECT_EQ(j8["model"]["inputs"][0]["shape"], Json::parse("[8,3,224,224]"));
  EXPECT_EQ(j8["model"]["inputs"][0]["declared_shape"], Json::parse(R"(["batch",3,224,224])"));
  for (const auto& w : j8["warnings"]) EXPECT_EQ(w.get<std::string>().find("symbolic dims not set"), std::string::npos);
  EXPECT_EQ(j8["totals"]["macs"].get<double>(), 8 * j1["totals"]["macs"].get<double>());
  EXPECT_EQ(j8["totals"]["flops"].get<double>(), 8 * j1["totals"]["flops"].get<double>());
  EXPECT_EQ(j8["totals"]["params"], j1["totals"]["params"]);  // weights do not grow with the batch
  EXPECT_EQ(j8["totals"]["params"], 25507944);
  if (j1["totals"]["macs"].get<double>() > 0) EXPECT_EQ(j1["totals"]["macs"], 4089184256);  // README reference
}

TEST(CliRun, InputShapeSetsTheWholeInput) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const std::string json_path = dir.file("r.json");
  const CliResult r = run_modelcost(resnet50() + " --input input=2x3x112x112 -q --json " + json_path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(read_text(json_path))["model"]["inputs"][0]["shape"], Json::parse("[2,3,112,112]"));
}

TEST(CliRun, CsvSumsEqualJsonTotals) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const std::string csv = dir.file("r.csv"), json_path = dir.file("r.json");
  const CliResult r = run_modelcost(resnet50() + " --dim batch=1 --csv " + csv + " --json " + json_path + " --top 3");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = parse_csv(read_text(csv));
  const Json json = Json::parse(read_text(json_path));
  ASSERT_EQ(rows.size(), 170u);
  EXPECT_EQ(json["nodes"].size(), 169u);
  for (const char* column : {"macs", "flops", "params", "bytes_read", "bytes_written"}) {
    const size_t c = column_index(rows[0], column);
    double sum = 0;
    for (size_t i = 1; i < rows.size(); ++i) sum += std::strtod(rows[i][c].c_str(), nullptr);
    // params: a weight several nodes read counts once in the total (docs/reports.md).
    if (std::string(column) == "params") EXPECT_GT(sum, json["totals"][column].get<double>());
    else EXPECT_EQ(sum, json["totals"][column].get<double>()) << column;
  }
}

TEST(CliRun, OverwritesAnEarlierReport) {
  TempDir dir;
  const std::string csv = dir.file("r.csv");
  write_text(csv, std::string(100000, 'x'));
  const CliResult r = run_modelcost(sample_model() + " -q --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(csv);
  EXPECT_EQ(text.rfind("name,op_type,", 0), 0u);
  EXPECT_EQ(text.find('x' + std::string(50, 'x')), std::string::npos);
}

}  // namespace
}  // namespace modelcost::testing
