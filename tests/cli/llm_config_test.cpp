// `modelcost llm config.json`: a Hugging Face model description planned like an ONNX decoder; the
// main command names it; --gpu auto and --ep.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "report/report.h"

namespace modelcost::testing {
namespace {

std::string config_path(const std::string& name) {
  return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/" + name + ".json";
}

TEST(LlmConfigCommand, PlansAConfigJsonWithItsExactParameterCount) {
  const CliResult r = run_modelcost("llm " + config_path("llama-3-8b") + " --gpu h100 --batch 1,8 --context 1024");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("llama-3-8b: decoder LLM (config.json), 32 layers, hidden 4096"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GQA 32 query / 8 kv heads of 128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parameters 8,030,261,248"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TTFT ms"), std::string::npos);
  EXPECT_NE(r.out.find("deployed step"), std::string::npos) << r.out;
}

TEST(LlmConfigCommand, MixtureOfExpertsJsonCarriesTheExpertsAndActiveParameters) {
  const CliResult r = run_modelcost("llm " + config_path("mixtral-8x7b") + " --gpu h100 --tp 2 --ep 2 --batch 1,32 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out).at("llm");
  EXPECT_EQ(j.at("parameters").get<double>(), 46'702'792'704.0);
  EXPECT_EQ(j.at("active_parameters_per_token").get<double>(), 12'879'925'248.0);
  EXPECT_EQ(j.at("decoder").at("experts").at("routed"), 8);
  EXPECT_EQ(j.at("decoder").at("experts").at("per_token"), 2);
  EXPECT_EQ(j.at("expert_parallel"), 2);
  EXPECT_EQ(j.at("devices_per_replica"), 2);
  EXPECT_GT(j.at("batches")[1].at("contexts")[0].at("decode").at("communication_ms").get<double>(), 0);
}

TEST(LlmConfigCommand, AModelFolderStandsForItsConfig) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("Qwen2-0.5B"));
  write_text(dir.file("Qwen2-0.5B/config.json"), read_text(config_path("qwen2-0.5b")));
  const CliResult r = run_modelcost("llm " + dir.file("Qwen2-0.5B") + " --gpu h100 --batch 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Qwen2-0.5B: decoder LLM (config.json), 24 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parameters 494,032,768"), std::string::npos) << r.out;
}

TEST(LlmConfigCommand, LatentAttentionKvBytesPerToken) {
  const CliResult r = run_modelcost("llm " + config_path("deepseek-v2-lite") + " --gpu h100 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out).at("llm");
  EXPECT_EQ(j.at("kv_bytes_per_token").get<double>(), 27.0 * (512 + 64) * 2);
  EXPECT_EQ(j.at("decoder").at("attention"), "MLA");
}

TEST(LlmConfigCommand, TheMainCommandSaysWhatAConfigIs) {
  const CliResult r = run_modelcost(config_path("mixtral-8x7b"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("Hugging Face config.json (mixtral, 32 layers, 46.70B parameters, 12.88B active per token)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("modelcost llm "), std::string::npos) << r.err;
}

TEST(LlmConfigCommand, AMissingFieldIsOneLineNamingIt) {
  TempDir dir;
  write_text(dir.file("config.json"), R"({"model_type": "mistral", "num_hidden_layers": 4, "hidden_size": 64,
                                          "num_attention_heads": 4, "intermediate_size": 128})");
  const CliResult r = run_modelcost("llm " + dir.file("config.json") + " --gpu h100");
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("missing field 'vocab_size'"), std::string::npos) << r.err;
  write_text(dir.file("config.json"), R"({"model_type": "gpt2", "n_layer": 12})");
  const CliResult unknown = run_modelcost("llm " + dir.file("config.json") + " --gpu h100");
  EXPECT_EQ(unknown.code, 4);
  EXPECT_NE(unknown.err.find("'model_type': 'gpt2' is not a supported decoder"), std::string::npos) << unknown.err;
}

TEST(LlmConfigCommand, ExpertParallelismWithoutExpertsIsAUsageError) {
  const CliResult r = run_modelcost("llm " + config_path("llama-3-8b") + " --gpu h100 --ep 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--ep: the model has no routed experts"), std::string::npos) << r.err;
}

TEST(LlmConfigCommand, GpuAutoResolvesThisMachinesGpuOrSaysThereIsNone) {
  const CliResult r = run_modelcost("llm " + config_path("qwen2-0.5b") + " --gpu auto --batch 1");
  if (r.code == 0) {  // a machine with a GPU the database knows
    EXPECT_NE(r.out.find("--gpu auto: this machine's"), std::string::npos) << r.out;
    return;
  }
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--gpu auto: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find("unknown device"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace modelcost::testing
