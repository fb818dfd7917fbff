// An op with no rule never silently zeroes a model: shapes from value_info when the file has
// them; otherwise a loud warning with the share left unshaped, and an error when no MACs remain
// or under --strict.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

// x -> [MatMul w0] -> Mystery -> [MatMul w1] -> y; `head` puts the unknown op first instead.
ModelBuilder chain(bool head, bool declare) {
  ModelBuilder b;
  b.opset("my.domain", 1);
  b.input("x", kFloat, Shape{4, 8}).weight("w0", kFloat, {8, 8}).weight("w1", kFloat, {8, 8});
  if (head) {
    b.node("Mystery", {"x"}, {"m"}, "my.domain");
    b.node("MatMul", {"m", "w0"}, {"a"});
  } else {
    b.node("MatMul", {"x", "w0"}, {"a0"});
    b.node("Mystery", {"a0"}, {"a"}, "my.domain");
  }
  b.node("MatMul", {"a", "w1"}, {"y"});
  if (declare) b.value_info(head ? "m" : "a", kFloat, {4, 8});
  b.output("y");
  return b;
}

}  // namespace

TEST(UnknownOps, UnknownOpAtTheInputCannotZeroTheModelWithExitZero) {
  TempDir dir;
  const std::string path = write_model(dir, "head.onnx", chain(true, false));
  const CliResult r = run_modelcost(path);
  EXPECT_EQ(r.code, kExitUnsupported) << r.out << r.err;
  EXPECT_NE(r.err.find("no MACs could be counted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("my.domain.Mystery"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("3 of 3 nodes (100.0%)"), std::string::npos) << r.err;
}

TEST(UnknownOps, DeclaredShapesCarryTheAnalysisPastAnUnknownOp) {
  TempDir dir;
  const std::string path = write_model(dir, "declared.onnx", chain(true, true));
  const CliResult r = run_modelcost(path + " --json " + dir.file("r.json"));
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_text(dir.file("r.json")))["totals"]["macs"].get<double>(), 512);
}

TEST(UnknownOps, PartlyUnshapedModelWarnsLoudlyWithTheShare) {
  TempDir dir;
  const std::string path = write_model(dir, "middle.onnx", chain(false, false));
  const CliResult r = run_modelcost(path);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("modelcost: warning: 2 of 3 nodes (66.7%)"), std::string::npos) << r.err;
}

TEST(UnknownOps, StrictMakesUnknownOpsAnError) {
  TempDir dir;
  const std::string declared = write_model(dir, "declared.onnx", chain(true, true));
  const CliResult r = run_modelcost(declared + " --strict");
  EXPECT_EQ(r.code, kExitUnsupported) << r.err;
  EXPECT_NE(r.err.find("--strict"), std::string::npos) << r.err;
  const std::string middle = write_model(dir, "middle.onnx", chain(false, false));
  EXPECT_EQ(run_modelcost(middle + " --strict").code, kExitUnsupported);
}

TEST(UnknownOps, StrictAcceptsACompleteModel) {
  const CliResult r = run_modelcost(sample_model() + " --strict -q");
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST(UnknownOps, UserOpRulesFileDeclaresTheOpWithoutARebuild) {
  TempDir dir;
  const std::string path = write_model(dir, "head.onnx", chain(true, false));
  write_text(dir.file("mystery.toml"), "[[op]]\ndomain = \"my.domain\"\ntype = \"Mystery\"\nflops_per_output = 3\n");
  const CliResult r = run_modelcost(path + " --strict --ops " + dir.file("mystery.toml") + " --json " + dir.file("r.json"));
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_text(dir.file("r.json")))["totals"]["macs"].get<double>(), 512);
  // The same through $MODELCOST_OPS, a folder of rule files.
  const std::string with_env = "MODELCOST_OPS=" + dir.path() + " " + std::string(MODELCOST_BINARY) + " --strict -q " +
                               path + " >/dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(with_env.c_str())), kExitOk);
  const CliResult missing = run_modelcost(path + " --ops " + dir.file("none.toml"));
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_NE(missing.err.find("none.toml"), std::string::npos) << missing.err;
}

}  // namespace modelcost::testing
