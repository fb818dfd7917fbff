// `modelcost diff`: the deployed view's figures, every device of --gpu, the plan of --batch, and a
// --help that lists the options diff takes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace modelcost::testing {
namespace {

nlohmann::json diff_json(const std::string& options) {
  const CliResult r = run_modelcost("diff " + sample_model() + " " + sample_model() + " " + options + " -q --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(DiffCommand, DeployedViewFiguresOnEveryDeviceAndBatch) {
  const auto whole = diff_json("--gpu a100,h100 --batch 1,8 --view deployed").at("whole_model");
  for (const char* name : {"predicted_latency_deployed_ms", "predicted_latency_ms", "predicted_latency_deployed_ms@h100-sxm",
                           "plan_latency_ms@a100-sxm4-80gb@8", "plan_latency_ms@h100-sxm@1", "plan_throughput_per_s@h100-sxm@8"})
    EXPECT_TRUE(whole.contains(name)) << name << ": " << whole.dump();
  EXPECT_EQ(whole.at("plan_latency_ms@h100-sxm@8").at("delta"), 0);
  EXPECT_GT(whole.at("plan_latency_ms@h100-sxm@8").at("a").get<double>(), whole.at("plan_latency_ms@h100-sxm@1").at("a").get<double>());
}

TEST(DiffCommand, TerminalPutsTheDeployedLatencyFirst) {
  const CliResult r = run_modelcost("diff " + sample_model() + " " + sample_model() + " --gpu a100 --view deployed");
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t deployed = r.out.find("predicted latency deployed (ms)");
  ASSERT_NE(deployed, std::string::npos) << r.out;
  EXPECT_LT(deployed, r.out.find("predicted latency as written (ms)"));
}

TEST(DiffCommand, HelpListsTheOptions) {
  const CliResult r = run_modelcost("diff --help");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* option : {"--gpu NAME", "--batch LIST", "--view", "--dim NAME=VALUE", "--csv FILE", "--json FILE"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << "\n" << r.out;
}

}  // namespace
}  // namespace modelcost::testing
