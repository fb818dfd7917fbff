// Each kind of bad input: an exit code between 1 and 125 and exactly one line on stderr,
// `modelcost: error: <file>: ...`, naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"

namespace modelcost::testing {
namespace {

void expect_one_line_error(const CliResult& r, int code, const std::string& file, const std::string& fragment = "") {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_GE(r.code, 1);
  EXPECT_LE(r.code, 125);
  EXPECT_EQ(r.err.rfind("modelcost: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_NE(r.err.find(file), std::string::npos) << "file not named: " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliErrors, MissingFile) {
  TempDir dir;
  const std::string path = dir.file("absent.onnx");
  expect_one_line_error(run_modelcost(path), kExitUnreadable, path, "No such file");
}

TEST(CliErrors, Directory) {
  TempDir dir;
  expect_one_line_error(run_modelcost(dir.path()), kExitUnreadable, dir.path(), "directory");
}

TEST(CliErrors, UnreadableFile) {
  TempDir dir;
  const std::string path = write_model(dir, "locked.onnx", ModelBuilder());
  chmod(path.c_str(), 0);
  if (access(path.c_str(), R_OK) == 0) GTEST_SKIP() << "running as root: permissions do not apply";
  expect_one_line_error(run_modelcost(path), kExitUnreadable, path, "Permission denied");
}

TEST(CliErrors, TextFileIsNotAModel) {
  TempDir dir;
  const std::string path = dir.file("notes.onnx");
  write_text(path, "These are notes, not a model.\nSecond line.\n");
  expect_one_line_error(run_modelcost(path), kExitInvalidModel, path, "not an ONNX model");
}

TEST(CliErrors, EmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.onnx");
  write_text(path, "");
  expect_one_line_error(run_modelcost(path), kExitInvalidModel, path, "empty");
}

TEST(CliErrors, TruncatedModel) {
  TempDir dir;
  const std::string whole = read_text(sample_model());
  ASSERT_GT(whole.size(), 1000u);
  const std::string path = dir.file("truncated.onnx");
  write_text(path, whole.substr(0, whole.size() / 2));
  expect_one_line_error(run_modelcost(path), kExitInvalidModel, path, "not an ONNX model");
}

TEST(CliErrors, Cycle) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{2});
  b.node("Add", {"x", "b"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.output("b");
  const std::string path = write_model(dir, "cycle.onnx", b);
  expect_one_line_error(run_modelcost(path), kExitInvalidModel, path, "cycle");
}

TEST(CliErrors, InputNothingProduces) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{2});
  b.node("Add", {"x", "ghost"}, {"y"});
  b.output("y");
  const std::string path = write_model(dir, "dangling.onnx", b);
  const CliResult r = run_modelcost(path);
  expect_one_line_error(r, kExitInvalidModel, path, "'ghost'");
  EXPECT_NE(r.err.find("node 'y'"), std::string::npos) << r.err;
}

TEST(CliErrors, NegativeInputDim) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, -3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string path = write_model(dir, "negative.onnx", b);
  expect_one_line_error(run_modelcost(path), kExitInvalidModel, path, "negative");
}

TEST(CliErrors, AttributeNoRuntimeAccepts) {
  TempDir dir;
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 3, 8, 8});
  b.weight("w", kFloat, {4, 3, 3, 3});
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "strides", std::vector<int64_t>{0, 0});
  b.output("y");
  const std::string path = write_model(dir, "zero_stride.onnx", b);
  const CliResult r = run_modelcost(path);
  expect_one_line_error(r, kExitInvalidModel, path, "node 'y' (Conv)");
  EXPECT_NE(r.err.find("stride"), std::string::npos) << r.err;
}

// Contrib ops have no ONNX schema here: their rows' arity is checked before the rule runs.
TEST(CliErrors, ContribOpMissingARequiredInput) {
  TempDir dir;
  ModelBuilder b;
  b.opset("com.microsoft", 1);
  b.input("x", kFloat, Shape{1, 3, 8, 8});
  b.node("FusedConv", {"x"}, {"y"}, "com.microsoft");  // X and W are required
  b.output("y");
  const std::string path = write_model(dir, "fused_conv.onnx", b);
  const CliResult r = run_modelcost(path);
  expect_one_line_error(r, kExitInvalidModel, path, "(FusedConv)");
  EXPECT_NE(r.err.find("has 1 input, needs at least 2"), std::string::npos) << r.err;
  ModelBuilder extra;
  extra.opset("com.microsoft", 1);
  extra.input("x", kFloat, Shape{4});
  extra.node("Gelu", {"x"}, {"y", "z"}, "com.microsoft");  // one output only
  extra.output("y");
  const std::string extra_path = write_model(dir, "gelu.onnx", extra);
  expect_one_line_error(run_modelcost(extra_path), kExitInvalidModel, extra_path, "has 2 outputs, takes at most 1");
}

TEST(CliErrors, OpsetNewerThanAnyKnownWarnsAndRefusesOnlyAnOpItCannotHandle) {
  TempDir dir;
  ModelBuilder b(99);
  b.input("x", kFloat, Shape{2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string path = write_model(dir, "opset99.onnx", b);
  const CliResult ok = run_modelcost(path);
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_NE(ok.out.find("opset 99"), std::string::npos) << ok.out;
  ModelBuilder future(99);
  future.input("x", kFloat, Shape{2});
  future.node("FutureOp", {"x"}, {"y"});
  future.output("y");
  const std::string future_path = write_model(dir, "future.onnx", future);
  expect_one_line_error(run_modelcost(future_path), kExitUnsupported, future_path, "FutureOp");
}

TEST(CliErrors, BadDim) {
  const std::string model = sample_model();
  expect_one_line_error(run_modelcost(model + " --dim batch=abc"), kExitUsage, model, "--dim 'batch=abc'");
  expect_one_line_error(run_modelcost(model + " --dim batch=-4"), kExitUsage, model, "whole number >= 0");
  expect_one_line_error(run_modelcost(model + " --dim batch"), kExitUsage, model, "NAME=VALUE");
  expect_one_line_error(run_modelcost(model + " --dim batch=2 --dim batch=3"), kExitUsage, model, "already set");
}

TEST(CliErrors, BadInputShape) {
  const std::string model = sample_model();
  expect_one_line_error(run_modelcost(model + " --input input=1x-3x224x224"), kExitUsage, model, "(got '-3')");
  expect_one_line_error(run_modelcost(model + " --input input=1x0x224x224"), kExitUsage, model, "(got '0')");
  expect_one_line_error(run_modelcost(model + " --input nosuch=1x3x224x224"), kExitUsage, model, "nosuch");
}

TEST(CliErrors, CommandLineParseErrorsAreOneLine) {
  CliResult r = run_modelcost("");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err.rfind("modelcost: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::string model = sample_model();
  expect_one_line_error(run_modelcost(model + " --frobnicate"), kExitUsage, model, "--frobnicate");
  expect_one_line_error(run_modelcost(model + " --top -1"), kExitUsage, model, "--top");
  expect_one_line_error(run_modelcost(model + " --top many"), kExitUsage, model, "--top");
  expect_one_line_error(run_modelcost(model + " " + model), kExitUsage, model);
}

TEST(CliErrors, RefusesToOverwriteTheModel) {
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  write_text(path, read_text(sample_model()));
  const std::string before = read_text(path);
  const std::string same_file = dir.path() + "/./model.onnx";
  expect_one_line_error(run_modelcost(path + " --csv " + same_file), kExitUsage, same_file, "input model");
  const std::string link = dir.file("link.json");
  std::filesystem::create_hard_link(path, link);
  expect_one_line_error(run_modelcost(path + " --json " + link), kExitUsage, link, "refusing to overwrite");
  EXPECT_EQ(read_text(path), before);
}

TEST(CliErrors, ReportFileCannotBeWritten) {
  TempDir dir;
  const std::string model = sample_model();
  const std::string csv = dir.file("no/such/folder/out.csv");
  expect_one_line_error(run_modelcost(model + " --csv " + csv), kExitUnreadable, csv, "cannot write report");
  expect_one_line_error(run_modelcost(model + " --json " + dir.path()), kExitUsage, dir.path(), "directory");
  const std::string both = dir.file("both.out");
  expect_one_line_error(run_modelcost(model + " --csv " + both + " --json " + both), kExitUsage, both,
                        "both --csv and --json");
}

}  // namespace
}  // namespace modelcost::testing
