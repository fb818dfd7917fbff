// `modelcost serve`: the serving simulation from the command line; reports and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace modelcost::testing {
namespace {

size_t count_of(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

std::string llama_8b() { return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/llama-3-8b.json"; }

TEST(ServeCommand, SummarisesAPoissonRun) {
  const CliResult r = run_modelcost("serve " + llama_8b() + " --gpu h100 --rate 2 --requests 100 --scheduler chunked");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("scheduler chunked, max batch 256, chunk 512 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TTFT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 preemptions"), std::string::npos) << r.out;
}

TEST(ServeCommand, JsonAndCsvHoldEveryRequest) {
  TempDir dir;
  const CliResult r = run_modelcost("serve " + llama_8b() + " --gpu h100 --rate 5 --requests 40 --output-len 8:64 --json - --csv " +
                                    dir.file("requests.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out).at("serve");
  EXPECT_EQ(json.at("requests").size(), 40u);
  EXPECT_GT(json.at("ttft_ms").at("p99").get<double>(), 0);
  EXPECT_EQ(json.at("saturated").get<bool>(), false);
  const std::string csv = read_text(dir.file("requests.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 41);
}

TEST(ServeCommand, SvgDrawsLatencyAgainstRate) {
  TempDir dir;
  const std::string base = "serve " + llama_8b() + " --gpu h100 --rate 4 --requests 60 --output-len 32";
  const CliResult r = run_modelcost(base + " --svg -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<svg", 0), 0u) << "the SVG alone on stdout";
  EXPECT_NE(r.out.find("TTFT (ms)"), std::string::npos);
  // Three panels (P50 and P99 of TTFT and TPOT, tokens/s) of 11 rates each.
  EXPECT_EQ(count_of(r.out, "<circle"), 5 * 11);
  const CliResult file = run_modelcost(base + " --svg " + dir.file("rates.svg"));
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_NE(file.out.find("TTFT"), std::string::npos) << "the summary beside the file";
  EXPECT_EQ(read_text(dir.file("rates.svg")), r.out);
  const CliResult search = run_modelcost("serve " + llama_8b() + " --gpu h100 --search --ttft-slo-ms 500 --tpot-slo-ms 50 --svg -");
  EXPECT_EQ(search.code, 2);
  EXPECT_NE(search.err.find("--svg"), std::string::npos) << search.err;
}

TEST(ServeCommand, SimulatesAnOnnxDecoderToo) {
  const std::string model = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/llama_gqa_kv.onnx";
  const CliResult r = run_modelcost("serve " + model + " --gpu l4 --dtype fp16 --rate 2 --requests 20 --prompt-len 64 --output-len 16 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("serve").at("requests").size(), 20u);
}

TEST(ServeCommand, ReadsATrace) {
  TempDir dir;
  write_text(dir.file("trace.jsonl"), "{\"arrival_s\": 0, \"prompt_len\": 100, \"output_len\": 10}\n"
                                      "{\"arrival_s\": 0.5, \"prompt_len\": 200, \"output_len\": 20}\n");
  const CliResult r = run_modelcost("serve " + llama_8b() + " --gpu h100 --trace " + dir.file("trace.jsonl") + " --csv -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(",100,10,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",200,20,"), std::string::npos) << r.out;
}

TEST(ServeCommand, BadValuesAreOneLineErrors) {
  TempDir dir;
  write_text(dir.file("bad.csv"), "arrival_s,prompt_len,output_len\n0,100,10\n1,-5,10\n");
  for (const std::string& bad : std::vector<std::string>{"--rate nan", "--rate inf", "--rate -1", "--rate 0", "", "--rate 1 --trace " + dir.file("bad.csv"),
                                 "--rate 1 --prompt-len 0", "--rate 1 --output-len 9:3", "--rate 1 --prompt-len abc",
                                 "--rate 1 --scheduler fifo", "--rate 1 --max-batch 0", "--rate 1 --chunk -4",
                                 "--rate 1 --requests 0", "--trace " + dir.file("bad.csv")}) {
    const CliResult r = run_modelcost("serve " + llama_8b() + " --gpu h100 " + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_EQ(r.err.rfind("modelcost: error: ", 0), 0u) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace modelcost::testing

namespace modelcost::testing {
namespace {

// The search's time (15-45 s on a 2-core machine, docs/llm.md) is not asserted here: the
// sanitized build runs it several times slower.
TEST(ServeCommand, SearchesLlama70BAcrossFourDevices) {
  const std::string model = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/llama-3-70b.json";
  const CliResult r = run_modelcost("serve " + model + " --gpu h100,h200,a100,l40s --search --ttft-slo-ms 1000 --tpot-slo-ms 50 "
                                    "--price-per-hour 2.5,3.5,1.5,1.0 --prompt-len 1024 --output-len 256 --scheduler chunked --rate 20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" 256 configurations"), std::string::npos) << r.out;  // 4 devices x TP 4 x PP 4 x batch 2 x chunk 2
  EXPECT_NE(r.out.find("Pareto front"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h100-sxm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cheapest for 20.0 requests/s"), std::string::npos) << r.out;  // the rate to serve at least cost
}

TEST(ServeCommand, SearchNeedsItsSlosAndOnePricePerDevice) {
  const std::string model = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/configs/llama-3-8b.json";
  for (const std::string& bad : std::vector<std::string>{"--search --gpu h100 --tpot-slo-ms 50",
                                                         "--search --gpu h100,a100 --ttft-slo-ms 1 --tpot-slo-ms 1 --price-per-hour 2",
                                                         "--search --gpu h100 --ttft-slo-ms 1 --tpot-slo-ms 1 --price-per-hour 2 --trace t.csv",
                                                         "--search --gpu h100 --ttft-slo-ms 1 --tpot-slo-ms 1 --price-per-hour 2 --rate 0",
                                                         "--gpu h100,a100 --rate 3"}) {
    const CliResult r = run_modelcost("serve " + model + " " + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace modelcost::testing
