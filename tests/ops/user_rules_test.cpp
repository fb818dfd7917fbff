// User op rules (TOML): each shape kind, formulas over input dims and attributes, costs, and
// errors that name the file and the op.
#include "ops/user_rules.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

OpRegistry registry_from(const std::string& toml) {
  OpRegistry r = OpRegistry::instance();
  load_user_op_rules_text(toml, "ops.toml", r);
  return r;
}

void expect_file_error(const std::string& toml, const std::string& fragment) {
  try {
    registry_from(toml);
    ADD_FAILURE() << "accepted: " << toml;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("ops.toml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

ModelBuilder custom(const std::string& op, const std::vector<std::string>& inputs) {
  ModelBuilder b;
  b.opset("com.example", 1);
  b.input("x", kFloat, Shape{4, 6}).weight("w", kFloat, {6, 10});
  b.node(op, inputs, {"y"}, "com.example");
  b.output("y");
  return b;
}

}  // namespace

TEST(UserRules, SameAsInputWithFlopsPerOutput) {
  const OpRegistry r = registry_from(R"(
[[op]]
domain = "com.example"
type = "FancyNorm"
shape = "same_as_input"
flops_per_output = 8
)");
  auto run = analyse_with(custom("FancyNorm", {"x"}), r);
  EXPECT_EQ(run->shape("y"), (Shape{4, 6}));
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 8 * 24);
  EXPECT_TRUE(run->cost("y").known);
}

TEST(UserRules, MatmulLikeCountsMatmulMacsByDefault) {
  const OpRegistry r = registry_from(R"(
[[op]]
domain = "com.example"
type = "MyLinear"
shape = "matmul"
flops_per_output = 1
)");
  auto run = analyse_with(custom("MyLinear", {"x", "w"}), r);
  EXPECT_EQ(run->shape("y"), (Shape{4, 10}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 4 * 6 * 10);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 240 + 40);
  EXPECT_DOUBLE_EQ(run->cost("y").params, 60);
}

TEST(UserRules, FormulaShapeAndCostOverDimsAndAttributes) {
  const OpRegistry r = registry_from(R"(
[[op]]
domain = "com.example"
type = "Project"
dims = ["in0[0]", "attr.units * 2"]
dtype = "float16"
macs = "in0[0] * in0[-1] * out[1]"
flops = "2 * in0[0] * in0[-1] * out[1] + out.numel"
)");
  ModelBuilder b = custom("Project", {"x"});
  set_attr(*b.graph().mutable_node(0), "units", int64_t{5});
  auto run = analyse_with(b, r);
  EXPECT_EQ(run->shape("y"), (Shape{4, 10}));
  EXPECT_EQ(run->tensor("y").dtype, kFloat16);
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 240);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 480 + 40);
}

TEST(UserRules, BroadcastShape) {
  const OpRegistry r = registry_from("[[op]]\ndomain = \"com.example\"\ntype = \"Blend\"\nshape = \"broadcast\"\n");
  ModelBuilder b;
  b.opset("com.example", 1);
  b.input("a", kFloat, Shape{4, 1}).input("b", kFloat, Shape{1, 6});
  b.node("Blend", {"a", "b"}, {"y"}, "com.example");
  b.output("y");
  EXPECT_EQ(analyse_with(b, r)->shape("y"), (Shape{4, 6}));
}

TEST(UserRules, MissingAttributeFailsNamingTheNode) {
  const OpRegistry r = registry_from("[[op]]\ndomain = \"com.example\"\ntype = \"Project\"\ndims = [\"attr.units\"]\n");
  try {
    analyse_with(custom("Project", {"x"}), r);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attribute 'units'"), std::string::npos) << e.what();
  }
}

TEST(UserRules, BadFilesAreUsageErrorsNamingFileAndOp) {
  expect_file_error("[[op]]\nshape = \"matmul\"\n", "type");
  expect_file_error("[[op]]\ntype = \"A\"\nshape = \"cubic\"\n", "op A: shape = \"cubic\"");
  expect_file_error("[[op]]\ntype = \"A\"\ndims = [\"in0[0] +\"]\n", "op A: dims");
  expect_file_error("[[op]]\ntype = \"A\"\nmacs = \"sqrt(in0[0])\"\n", "unknown function 'sqrt'");
  expect_file_error("[[op]]\ntype = \"A\"\nflops = \"1\"\nflops_per_output = 2\n", "not both");
  expect_file_error("this is not toml", "line 1");
  expect_file_error("x = 1\n", "no [[op]]");
}

// Hostile formulas fail when the file is loaded, never with "internal error" or a stack overflow.
TEST(UserRules, HostileFormulasAreLoadTimeErrors) {
  auto macs = [](const std::string& formula) { return "[[op]]\ntype = \"A\"\nmacs = \"" + formula + "\"\n"; };
  std::string chain = "in0[0]";
  for (int i = 0; i < 5000; ++i) chain += "+in0[0]";
  expect_file_error(macs(chain), "over 1000 operators deep");
  std::string wide = "max(1,1)";
  for (int i = 0; i < 6000; ++i) wide = i % 2 ? "max(" + wide + ",1)" : wide + "*1";
  expect_file_error(macs(wide), "op A: macs");
  expect_file_error(macs("1e999"), "number 1e999 is outside a double's range");
  expect_file_error(macs("1e-400"), "number 1e-400 is outside a double's range");
  expect_file_error(macs("in0[abc]"), "'in0[abc]': the dim index must be a whole number");
  expect_file_error(macs("in99999999999999999999[0]"), "does not name an input");
  expect_file_error(macs("in0[-99999999999999999999]"), "the dim index must be a whole number");
  expect_file_error(macs("out.size"), "unknown name 'out.size'");
  expect_file_error("[[op]]\ntype = \"A\"\nflops_per_output = inf\n", "flops_per_output must be a finite number");
}

TEST(UserRules, DimFormulasOutsideADimFailNamingTheNode) {
  for (const char* formula : {"1e300", "attr.units * 1e300", "0 - 1", "0.5"}) {
    const OpRegistry r = registry_from(std::string("[[op]]\ndomain = \"com.example\"\ntype = \"Project\"\ndims = [\"") +
                                       formula + "\"]\n");
    ModelBuilder b = custom("Project", {"x"});
    set_attr(*b.graph().mutable_node(0), "units", int64_t{3});
    try {
      analyse_with(b, r);
      ADD_FAILURE() << formula << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a whole number in [0, 2^50]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace modelcost::testing
