#include "cli/options.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

void expect_usage_error(const std::function<void()>& parse, const std::string& fragment) {
  try {
    parse();
    ADD_FAILURE() << "accepted; expected an error containing " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(CliOptions, DimAssignment) {
  EXPECT_EQ(parse_dim_assignment("batch=8"), std::make_pair(std::string("batch"), int64_t{8}));
  EXPECT_EQ(parse_dim_assignment("sequence_length=128"), std::make_pair(std::string("sequence_length"), int64_t{128}));
  EXPECT_EQ(parse_dim_assignment("a=b=3"), std::make_pair(std::string("a=b"), int64_t{3}));  // the last '=' splits
  EXPECT_EQ(parse_dim_assignment("big=2147483648").second, int64_t{2147483648});
}

TEST(CliOptions, BadDimAssignments) {
  expect_usage_error([] { parse_dim_assignment("batch"); }, "--dim 'batch': expected NAME=VALUE");
  expect_usage_error([] { parse_dim_assignment("=8"); }, "missing NAME");
  expect_usage_error([] { parse_dim_assignment("batch="); }, "whole number >= 0");
  EXPECT_EQ(parse_dim_assignment("past=0").second, 0);
  expect_usage_error([] { parse_dim_assignment("batch=-1"); }, "whole number >= 0 (got '-1')");
  expect_usage_error([] { parse_dim_assignment("batch=+8"); }, "whole number >= 0");
  expect_usage_error([] { parse_dim_assignment("batch=8x"); }, "whole number >= 0");
  expect_usage_error([] { parse_dim_assignment("batch= 8"); }, "whole number >= 0");
  expect_usage_error([] { parse_dim_assignment("batch=1.5"); }, "whole number >= 0");
  expect_usage_error([] { parse_dim_assignment("batch=99999999999999999999"); }, "whole number >= 0");
}

TEST(CliOptions, InputAssignment) {
  auto [name, shape] = parse_input_assignment("input=1x3x224x224");
  EXPECT_EQ(name, "input");
  EXPECT_EQ(shape, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(parse_input_assignment("onnx::ids=7").second, (Shape{7}));
}

TEST(CliOptions, BadInputAssignments) {
  expect_usage_error([] { parse_input_assignment("input"); }, "expected NAME=DIMS");
  expect_usage_error([] { parse_input_assignment("input="); }, "missing DIMS");
  expect_usage_error([] { parse_input_assignment("=1x3"); }, "missing NAME");
  expect_usage_error([] { parse_input_assignment("input=1x0x3"); }, "(got '0')");
  expect_usage_error([] { parse_input_assignment("input=1x-3"); }, "(got '-3')");
  expect_usage_error([] { parse_input_assignment("input=1xx3"); }, "(got '')");
  expect_usage_error([] { parse_input_assignment("input=1x3x"); }, "(got '')");
  expect_usage_error([] { parse_input_assignment("input=1,3"); }, "(got '1,3')");
}

TEST(CliOptions, RepeatedNamesMustAgree) {
  CliOptions options;
  options.dims = {"batch=8", "seq=128", "batch=8"};
  options.inputs = {"x=1x2"};
  const ShapeOptions shapes = shape_options_from(options);
  EXPECT_EQ(shapes.dims.at("batch"), 8);
  EXPECT_EQ(shapes.dims.at("seq"), 128);
  EXPECT_EQ(shapes.inputs.at("x"), (Shape{1, 2}));
  options.dims.push_back("batch=4");
  expect_usage_error([&] { shape_options_from(options); }, "batch is already set to 8");
  options.dims.pop_back();
  options.inputs.push_back("x=1x3");
  expect_usage_error([&] { shape_options_from(options); }, "x is already set");
}

}  // namespace
}  // namespace modelcost
