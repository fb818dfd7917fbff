// The command lines a new user tried, each as reported: the answer is now a clear one-line error
// (or the right output), never a silent misreading.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <regex>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"
#include "report/report.h"

namespace modelcost::testing {
namespace {

std::string resnet50() { return sample_model(); }

void expect_usage(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.code, kExitUsage) << r.err << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliPapercuts, DimWithACommaListIsRejected) {
  expect_usage(run_modelcost(resnet50() + " --dim batch=1,seq=128"), "one NAME=VALUE per --dim");
}

TEST(CliPapercuts, UnknownDimIsAnErrorNamingTheKnownDims) {
  const CliResult r = run_modelcost(resnet50() + " --dim foo=3");
  expect_usage(r, "--dim foo=3: the model's inputs have no dim named 'foo' (symbolic dims: batch)");
}

TEST(CliPapercuts, InputOfTheWrongRankIsAUsageError) {
  const CliResult r = run_modelcost(resnet50() + " --input input=1x3x224");
  expect_usage(r, "'input' has 4 dims ([batch,3,224,224]), got 3");
  EXPECT_EQ(r.err.find("invalid"), std::string::npos) << r.err;
}

TEST(CliPapercuts, ReportPathsAreCheckedBeforeAnyWork) {
  TempDir dir;
  for (const char* option : {"--csv", "--json", "--html"}) {
    const CliResult r = run_modelcost(resnet50() + " " + option + " /nonexistent/x.out");
    EXPECT_EQ(r.code, kExitUnreadable) << option << ": " << r.err;
    EXPECT_NE(r.err.find("/nonexistent/x.out: cannot write report: no such directory"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // nothing was analysed or printed
  }
  const CliResult svg = run_modelcost(resnet50() + " --gpu a100 --roofline-svg /nonexistent/r.svg");
  EXPECT_EQ(svg.code, kExitUnreadable) << svg.err;
  EXPECT_TRUE(svg.out.empty());
  // A measurement would take minutes: the path fails before the device is even looked for.
  const CliResult measured = run_modelcost(resnet50() + " --measure --cpu --csv /nonexistent/x.csv");
  EXPECT_EQ(measured.code, kExitUnreadable) << measured.err;
  EXPECT_EQ(measured.err.find("measur"), std::string::npos) << measured.err;
}

TEST(CliPapercuts, NegativePeakIsAShortRangeError) {
  const CliResult r = run_modelcost(resnet50() + " --peak-tflops -5 --bandwidth-gbps 100");
  expect_usage(r, "expected a number above 0, got '-5'");
  EXPECT_LT(r.err.size(), 200u) << r.err;
}

TEST(CliPapercuts, RepeatedGpuIsAList) {
  const CliResult r = run_modelcost(resnet50() + " --gpu a100 --gpu h100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Devices side by side"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("H100"), std::string::npos);
}

TEST(CliPapercuts, MisspelledOptionSuggestsTheRightOne) {
  const CliResult r = run_modelcost(resnet50() + " --dmi batch=1");
  expect_usage(r, "did you mean --dim?");
}

TEST(CliPapercuts, DeviceErrorsAreNotBlamedOnTheModel) {
  CliResult r = run_modelcost(resnet50() + " --gpu nosuch");
  expect_usage(r, "modelcost: error: --gpu: unknown device 'nosuch'");
  r = run_modelcost(resnet50() + " --gpu a100 --hwdb /x");
  EXPECT_EQ(r.code, kExitUnreadable);
  EXPECT_EQ(r.err.rfind("modelcost: error: /x: ", 0), 0u) << r.err;
}

TEST(CliPapercuts, PlanWithoutDtypeNamesTheDtypeUsed) {
  const CliResult r = run_modelcost(resnet50() + " --gpu a100 --batch 1,8");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Capacity plan on A100 SXM4 80GB (fp32)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("()"), std::string::npos) << r.out;
}

TEST(CliPapercuts, PlanFiguresShareOneNumberFormat) {
  const CliResult r = run_modelcost(resnet50() + " --gpu a100 --batch 1,8,32,128 --target-qps 20000");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(std::regex_search(r.out, std::regex("[0-9]e[+-][0-9]"))) << r.out;  // no "1.2e+04"
  EXPECT_NE(r.out.find("for 20.0 K inferences/s"), std::string::npos) << r.out;
}

TEST(CliPapercuts, ListGpusColumnsLineUp) {
  TempDir dir;
  write_text(dir.file("long.toml"), read_text(std::string(MODELCOST_SOURCE_DIR) + "/hwdb/a100-sxm4-80gb.toml"));
  std::string text = read_text(dir.file("long.toml"));
  text = std::regex_replace(text, std::regex("id = \"a100-sxm4-80gb\""), "id = \"a-very-long-device-id-for-alignment\"");
  text = std::regex_replace(text, std::regex("aliases = \\[[^\\]]*\\]"), "aliases = []");
  write_text(dir.file("long.toml"), text);
  const CliResult r = run_modelcost("--list-gpus --hwdb " + dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  // The memory column ends at the same place on every line.
  std::istringstream lines(r.out);
  std::string line, header;
  std::getline(lines, header);
  const size_t end = header.find("mem_GB") + 6;
  while (std::getline(lines, line)) {
    ASSERT_GT(line.size(), end) << line;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[end - 1]))) << header << "\n" << line;
    EXPECT_EQ(line[end], ' ') << header << "\n" << line;
  }
}

TEST(CliPapercuts, CountersWithoutAGpuSuggestNoCpu) {
  const CliResult r = run_modelcost(resnet50() + " --measure --counters");
  if (r.code == 0) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  EXPECT_NE(r.err.find("--counters needs this machine's NVIDIA GPU"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--cpu"), std::string::npos) << r.err;
}

TEST(CliPapercuts, ChannelsAreNotCalledABatch) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  const CliResult r = run_modelcost(shared_model("ssdlite320_mobilenet_v3_large_op17.onnx") + " --gpu a100 --top 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("batch 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on A100 SXM4 80GB, fp32: "), std::string::npos) << r.out;
}

TEST(CliPapercuts, Fp16CsvHasWholeBytesThatSumToTheJsonTotalsAndRecastDtypes) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const CliResult r = run_modelcost(shared_model("bert_base_op17.onnx") + " --gpu h100 --dtype fp16 -q --csv " + dir.file("r.csv") +
                                    " --json " + dir.file("r.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json json = Json::parse(read_text(dir.file("r.json")));
  std::istringstream csv(read_text(dir.file("r.csv")));
  std::string line;
  std::getline(csv, line);
  auto index_of = [&](const std::string& name) {
    size_t column = 0;
    for (size_t i = 0; i < line.find("," + name + ",") + 1; ++i) column += line[i] == ',';
    return column;
  };
  const size_t read = index_of("bytes_read"), written = index_of("bytes_written"), dtypes = index_of("output_dtypes");
  double read_sum = 0, written_sum = 0;
  size_t float32_cells = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line.substr(0, line.size() - 1));  // drop the CR
    for (std::string f; std::getline(fields, f, ',');) cells.push_back(f);
    ASSERT_GT(cells.size(), dtypes) << line;
    EXPECT_EQ(cells[read].find('.'), std::string::npos) << line;
    EXPECT_EQ(cells[written].find('.'), std::string::npos) << line;
    read_sum += std::stod(cells[read]);
    written_sum += std::stod(cells[written]);
    float32_cells += cells[dtypes].find("float32") != std::string::npos;
  }
  EXPECT_EQ(read_sum, json["totals"]["bytes_read"].get<double>());
  EXPECT_EQ(written_sum, json["totals"]["bytes_written"].get<double>());
  EXPECT_EQ(float32_cells, 0u);
  bool float16 = false;
  for (const auto& node : json["nodes"])
    for (const auto& out : node["outputs"]) float16 |= out["dtype"] == "float16";
  EXPECT_TRUE(float16);
}

}  // namespace
}  // namespace modelcost::testing
