// The commands a new user ran, each as reported, with what they now do: the figures the options
// ask for, or a one-line error with the right exit code.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

using nlohmann::json;

json json_of(const CliResult& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

std::string corpus(const std::string& name) { return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/corpus/" + name; }

TEST(NewUserCommands, BatchListResizesAWholeInput) {
  const json j = json_of(run_modelcost(sample_model() + " --input input=8x3x224x224 --gpu a100 --batch 1,32 -q --json -"));
  const json& rows = j.at("plan").at("rows");
  ASSERT_EQ(rows.size(), 2u);
  const double at1 = rows[0].at("latency_ms"), at32 = rows[1].at("latency_ms");
  EXPECT_GT(at32, 4 * at1);  // 32 images take far longer than one (the bug: the same latency)
  EXPECT_LT(rows[1].at("throughput_per_s").get<double>(), 32 * rows[0].at("throughput_per_s").get<double>());
  EXPECT_EQ(j.at("model").at("inputs")[0].at("shape")[0], 1);  // the nodes are at the first batch
}

TEST(NewUserCommands, DimThatDisagreesWithAWholeInputIsRefused) {
  const CliResult r = run_modelcost(sample_model() + " --input input=8x3x224x224 --dim batch=4");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--dim batch=4 disagrees with --input input=8x3x224x224"), std::string::npos) << r.err;
  const CliResult same = run_modelcost(sample_model() + " --input input=8x3x224x224 --dim batch=8");
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.out.find("names no symbolic dim"), std::string::npos) << same.out;
}

TEST(NewUserCommands, DtypeWithoutADeviceResizesBytes) {
  const json fp32 = json_of(run_modelcost(sample_model() + " -q --json -"));
  const json fp16 = json_of(run_modelcost(sample_model() + " --dtype fp16 -q --json -"));
  EXPECT_EQ(fp16.at("totals").at("macs"), fp32.at("totals").at("macs"));
  EXPECT_LT(fp16.at("totals").at("bytes_read").get<double>(), 0.6 * fp32.at("totals").at("bytes_read").get<double>());
  EXPECT_FALSE(fp16.contains("hardware"));
}

TEST(NewUserCommands, DtypeNamesInAnyCaseAndTheirAliases) {
  const json reference = json_of(run_modelcost(sample_model() + " --gpu a100 --dtype fp16 -q --json -"));
  for (const char* name : {"FP16", "float16", "half", "Float16"}) {
    const json j = json_of(run_modelcost(sample_model() + " --gpu a100 --dtype " + name + " -q --json -"));
    EXPECT_EQ(j.at("hardware").at("dtype"), "fp16") << name;
    EXPECT_EQ(j.at("totals").at("bytes_read"), reference.at("totals").at("bytes_read")) << name;
  }
  EXPECT_EQ(json_of(run_modelcost(sample_model() + " --gpu a100 --dtype bfloat16 -q --json -")).at("hardware").at("dtype"), "bf16");
  EXPECT_EQ(json_of(run_modelcost(sample_model() + " --gpu a100 --dtype float32 -q --json -")).at("hardware").at("dtype"), "fp32");
  const CliResult bad = run_modelcost(sample_model() + " --dtype fp12");
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.err.find("unknown --dtype 'fp12'"), std::string::npos) << bad.err;
}

TEST(NewUserCommands, ByModuleReadsDynamoNameScopes) {
  const json j = json_of(run_modelcost(corpus("rms_block_dynamo_op23.onnx") + " --by-module 1 -q --json -"));
  std::vector<std::string> modules;
  for (const auto& row : j.at("by_module")) modules.push_back(row.at("module"));
  for (const char* m : {"/norm", "/qkv", "/o", "/mlp"})
    EXPECT_NE(std::find(modules.begin(), modules.end(), m), modules.end()) << m;
}

TEST(NewUserCommands, SeveralDevicesNameTheViewOfEachLatency) {
  const CliResult r = run_modelcost(sample_model() + " --gpu a100,h100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted latency as written on h100-sxm (ms)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted latency deployed on h100-sxm (ms)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Devices side by side (deployed, fp32)"), std::string::npos) << r.out;
}

TEST(NewUserCommands, PlanKeepsARuntimeReserve) {
  const json j = json_of(run_modelcost(sample_model() + " --gpu a100 --batch 1 -q --json -"));
  const json& row = j.at("plan").at("rows")[0];
  EXPECT_DOUBLE_EQ(row.at("workspace_bytes").get<double>(), 0.5e9);
  EXPECT_LE(j.at("plan").at("max_batch").at("memory_bytes").get<double>(), 80e9);
}

TEST(NewUserCommands, HugeDimIsAUsageError) {
  const CliResult r = run_modelcost(sample_model() + " --dim batch=99999999999999");
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("holds over 2^62 elements"), std::string::npos) << r.err;
}

TEST(NewUserCommands, GpuAutoWithoutAGpuIsADeviceError) {
  if (std::getenv("CUDA_VISIBLE_DEVICES") || std::system("nvidia-smi >/dev/null 2>&1") == 0) GTEST_SKIP() << "a GPU is here";
  const CliResult r = run_modelcost(sample_model() + " --gpu auto");
  EXPECT_EQ(r.code, kExitRuntime) << r.err;
  EXPECT_EQ(run_modelcost(sample_model() + " --measure").code, kExitRuntime);
}

TEST(NewUserCommands, CalibrateQuietAndTheRefittedGridReadsRight) {
  const std::string grid = std::string(MODELCOST_SOURCE_DIR) + "/docs/calibration/h100-sxm-grid.csv";
  const CliResult quiet = run_modelcost("calibrate -q --from-grid " + grid);
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_TRUE(quiet.out.empty()) << quiet.out;
  const CliResult r = run_modelcost("calibrate --from-grid " + grid);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("()"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/ 0 TF"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0 us per 1000 K"), std::string::npos) << r.out;
  // The grid's one figure, the library gap (time per call in a graph less the kernel's duration):
  // the shipped H100 entry holds it rounded to two places (scripts/apply_kernel_grid.py).
  const std::string gap_label = "library call gap in a graph";
  const size_t gap = r.out.find(gap_label);
  ASSERT_NE(gap, std::string::npos) << r.out;
  const double measured_gap = std::stod(r.out.substr(gap + gap_label.size()));
  std::ifstream entry(std::string(MODELCOST_SOURCE_DIR) + "/hwdb/h100-sxm.toml");
  std::string line;
  double shipped_gap = -1;
  while (std::getline(entry, line))
    if (line.rfind("library_gap_us = ", 0) == 0) shipped_gap = std::stod(line.substr(17));
  EXPECT_NEAR(measured_gap, shipped_gap, 0.005) << r.out;
  // Every curve row starts its time in the same column as the header says.
  const size_t header = r.out.find("kernel class");
  ASSERT_NE(header, std::string::npos);
  const size_t column = r.out.find("time per call", header) - header;
  const size_t gemm = r.out.find("\ngemm ") + 1;
  EXPECT_EQ(r.out.find(" us", gemm) - gemm, column + 4) << r.out;  // "2.45 us" under the header
}

TEST(NewUserCommands, HwdbTakesTheSingleFileCalibrateWrites) {
  const std::string file = std::string(MODELCOST_SOURCE_DIR) + "/hwdb/a100-sxm4-80gb.toml";
  const CliResult r = run_modelcost(sample_model() + " --gpu a100 --hwdb " + file + " -q");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(NewUserCommands, UnnamedDimWarningSuggestsAnInputThatWorks) {
  const std::string model = corpus("sklearn_random_forest.onnx");
  const CliResult r = run_modelcost(model);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--input X=1x8"), std::string::npos) << r.out;
  const CliResult suggested = run_modelcost(model + " --input X=1x8");
  EXPECT_EQ(suggested.code, 0) << suggested.err;
  EXPECT_EQ(suggested.out.find("not set"), std::string::npos) << suggested.out;
}

TEST(NewUserCommands, LlmContextShorterThanThePromptIsRefused) {
  const std::string model = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/llama_gqa_kv.onnx";
  const CliResult r = run_modelcost("llm " + model + " --gpu h100 --context 100 --prompt 512");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--context 100 is shorter than --prompt 512"), std::string::npos) << r.err;
}

TEST(NewUserCommands, LlmSvgHasGridlinesSlosAndATtftPanel) {
  TempDir dir;
  const std::string model = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/llama_gqa_kv.onnx";
  const CliResult r = run_modelcost("llm " + model + " --gpu l4 --batch 1,8,32 --prompt 512 --context 768,2048 --tpot-slo-ms 0.2" +
                                    " --ttft-slo-ms 2 -q --svg " + dir.file("p.svg"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read_text(dir.file("p.svg"));
  EXPECT_NE(svg.find(">TTFT (ms, prefill)<"), std::string::npos);
  EXPECT_NE(svg.find(">SLO 0.2<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">SLO 2<"), std::string::npos);
  size_t gridlines = 0;
  for (size_t at = svg.find("stroke='#e6e6e6'"); at != std::string::npos; at = svg.find("stroke='#e6e6e6'", at + 1)) ++gridlines;
  EXPECT_EQ(gridlines, 3u * 4u);  // four per panel
}

}  // namespace
}  // namespace modelcost::testing
