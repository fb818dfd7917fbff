// Command-line options of `modelcost MODEL ...` and the strict parsers of --dim and --input.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "modelcost/tensor.h"
#include "shapes/shape_engine.h"

namespace CLI { class App; }

namespace modelcost {

struct CliOptions {
  std::string model_path;
  std::vector<std::string> dims;    // raw --dim NAME=VALUE
  std::vector<std::string> inputs;  // raw --input NAME=1x3x224x224
  int top = 15;
  std::string csv_path;
  std::string json_path;
  bool by_op = false;
  bool quiet = false;
};

// Declares every option on `app`, bound to `options`.
void add_cli_options(CLI::App& app, CliOptions& options);

// "batch=8" -> {"batch", 8}. Throws Error(kExitUsage) for anything but NAME=POSITIVE_INTEGER.
std::pair<std::string, int64_t> parse_dim_assignment(const std::string& text);
// "input=1x3x224x224" -> {"input", {1,3,224,224}}. Throws Error(kExitUsage) for bad syntax or a dim <= 0.
std::pair<std::string, Shape> parse_input_assignment(const std::string& text);
// All --dim and --input values; a name given twice with different values is a usage error.
ShapeOptions shape_options_from(const CliOptions& options);

}  // namespace modelcost
