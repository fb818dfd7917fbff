#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace modelcost::testing {
namespace {

std::string export_path(const std::string& name) {
  return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/" + name + ".onnx";
}

TEST(LlmCommand, PrintsTheTablesAndWritesJsonCsvSvg) {
  TempDir dir;
  const CliResult r = run_modelcost("llm " + export_path("llama_gqa_kv") +
                                    " --gpu h100 --dtype fp16 --prompt 64 --generate 32 --batch 1,8 --context 128,2048"
                                    " --json " + dir.file("p.json") + " --csv " + dir.file("p.csv") + " --svg " + dir.file("p.svg"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("decoder LLM, 2 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GQA 4 query / 2 kv heads of 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TTFT ms"), std::string::npos);
  const auto j = nlohmann::json::parse(read_text(dir.file("p.json"))).at("llm");
  EXPECT_EQ(j.at("batches").size(), 2u);
  EXPECT_EQ(j.at("batches")[1].at("contexts").size(), 2u);
  EXPECT_DOUBLE_EQ(j.at("kv_bytes_per_token").get<double>(), 2.0 * 2 * 2 * 16 * 2);
  const std::string csv = read_text(dir.file("p.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 2);  // header + batch x context
  const std::string svg = read_text(dir.file("p.svg"));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("context 2048"), std::string::npos);
}

TEST(LlmCommand, TinyLlamaAtBatchEightIsPlannedNotRefused) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  const CliResult r = run_modelcost("llm " + shared_model("tinyllama_1b_op18.onnx") +
                                    " --gpu l4 --dtype fp16 --batch 1,8 --prompt 512 --generate 256 --context 2048");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("decode step is derived"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the file fixes batch 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("most concurrent sequences"), std::string::npos);
}

TEST(LlmCommand, ANonDecoderIsOneLineNamingWhatIsMissing) {
  const CliResult r = run_modelcost("llm " + sample_model() + " --gpu h100");
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("modelcost: error: "), std::string::npos);
  EXPECT_NE(r.err.find("not a decoder LLM: no token input"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(LlmCommand, BadOptionsAreUsageErrors) {
  EXPECT_EQ(run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --tp 3").code, 2);
  EXPECT_EQ(run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --weights int3").code, 2);
  EXPECT_EQ(run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --batch 0").code, 2);
  EXPECT_EQ(run_modelcost("llm " + export_path("llama_gqa_kv")).code, 2);  // no --gpu
}

// A config.json's serving iterations and a chunked prefill: priced, printed and in the JSON.
TEST(LlmCommand, PricesServingIterationsAndAChunkedPrefill) {
  const std::string config = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/qwen2-0.5b.json";
  const CliResult r = run_modelcost("llm " + config + " --gpu h100 --dtype fp16 --prompt 2048 --prefill-chunk 512 " +
                                    "--iteration 1x512@1024+32@2048 --iteration 64@4096 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out).at("llm");
  ASSERT_EQ(j.at("iterations").size(), 2u);
  EXPECT_EQ(j.at("iterations")[0].at("mix"), "1x512@1024+32@2048");
  EXPECT_EQ(j.at("iterations")[0].at("step").at("kernels").get<double>(), 12 * 24 + 4);
  EXPECT_EQ(j.at("iterations")[1].at("step").at("kernels").get<double>(), 10 * 24 + 3);
  EXPECT_EQ(j.at("batches")[0].at("prefill").at("kernels").get<double>(), 4 * (9 * 24 + 4));  // four chunks
  const CliResult text = run_modelcost("llm " + config + " --gpu h100 --dtype fp16 --iteration 2x128@0");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("serving iterations"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2x128@0"), std::string::npos) << text.out;
  // Counts far beyond any GPU are priced, not overflowed.
  const CliResult huge = run_modelcost("llm " + config + " --gpu h100 --iteration 999999999999x999999999999@0+999999999999@5");
  EXPECT_EQ(huge.code, 0) << huge.err;
  EXPECT_NE(huge.out.find("999999999999x999999999999@0"), std::string::npos) << huge.out;
  for (const char* bad : {" --iteration 1x@0", " --iteration 0@5", " --prefill-chunk 0", " --prefill-chunk -4"}) {
    const CliResult e = run_modelcost("llm " + config + " --gpu h100" + bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
  }
}

// The H100's all-reduce is calibrated (NCCL over two of them); --link prices the link's own figures.
TEST(LlmCommand, TensorParallelOverNvlink) {
  const CliResult r = run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --dtype fp16 --tp 2 --batch 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tensor parallel over 2 (calibrated all-reduce"), std::string::npos) << r.out;
  const CliResult link = run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --dtype fp16 --tp 2 --batch 4 --link nvlink");
  ASSERT_EQ(link.code, 0) << link.err;
  EXPECT_NE(link.out.find("tensor parallel over 2 (nvlink"), std::string::npos) << link.out;
}

TEST(LlmCommand, MeasureWithoutAGpuIsOneLine) {
  const CliResult r = run_modelcost("llm " + export_path("llama_gqa_kv") + " --gpu h100 --measure --batch 2 --prompt 8 --context 16");
  if (r.code == 0) {  // a machine with a GPU: the steps are listed beside their predictions
    EXPECT_NE(r.out.find("prefill batch 2, 8 tokens"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("decode batch 2, 16 context"), std::string::npos) << r.out;
    return;
  }
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace modelcost::testing
