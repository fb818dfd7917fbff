// Command-line options of `modelcost MODEL ...` and the strict parsers of --dim and --input.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "modelcost/tensor.h"
#include "shapes/shape_engine.h"

namespace CLI { class App; class Validator; }

namespace modelcost {

struct CliOptions {
  std::string model_path;
  std::vector<std::string> dims;    // raw --dim NAME=VALUE
  std::vector<std::string> inputs;  // raw --input NAME=1x3x224x224
  int top = 15;
  std::string csv_path;
  std::string json_path;
  std::string html_path;  // --html FILE: one self-contained page
  int by_module = -1;     // --by-module DEPTH: totals per node-name scope (-1: off)
  bool by_op = false;
  bool quiet = false;
  bool strict = false;  // --strict: unknown ops and unshaped nodes are errors
  std::vector<std::string> op_rule_files;  // --ops FILE: user op rules (docs/ops/user_rules.md)

  // Hardware, roofline and capacity plan (docs/roofline.md).
  std::string gpus;                    // --gpu a100 | a100,h100,l4 | auto
  std::string dtype;                   // --dtype fp16|bf16|fp32|tf32|fp8|int8
  std::vector<std::string> hwdb_dirs;  // --hwdb DIR (repeatable)
  bool list_gpus = false;
  std::optional<double> peak_tflops;     // --peak-tflops: a custom device, or override of --gpu
  std::optional<double> bandwidth_gbps;  // --bandwidth-gbps
  std::string roofline_svg;            // --roofline-svg FILE
  std::string view = "deployed";       // --view deployed|as-written: fused kernels or one kernel per node
  std::string ceilings = "achievable"; // --ceilings achievable|datasheet
  std::string groups_csv;              // --groups-csv FILE: one row per fused kernel
  std::string batches;                 // --batch 1,8,32,128
  std::string batch_dim;               // --batch-dim NAME (default: the first input's first dim)
  std::optional<double> target_qps;
  std::optional<double> latency_slo_ms;
  std::string prices;  // --price-per-hour USD (one per --gpu device, comma-separated)

  // Measurement (docs/measurement.md).
  bool measure = false;
  bool cpu = false;
  bool cold = false;
  bool autotune = false;
  bool counters = false;  // --counters: DRAM bytes and executed FLOPs per node (CUPTI range profiler)
  bool calibrate = false;  // the `calibrate` subcommand
  std::string calibrate_out;  // calibrate --out FILE: the hwdb entry
  std::string calibrate_kernels_csv;  // calibrate --kernels-csv FILE: the grid of library kernels
  std::string calibrate_from_grid;    // calibrate --from-grid FILE: refit a saved grid, no GPU
  bool diff = false;                     // the `diff` subcommand
  std::vector<std::string> diff_models;  // diff A.onnx B.onnx
};

// Declares every option on `app`, bound to `options`.
void add_cli_options(CLI::App& app, CliOptions& options);

// "did you mean --dim?" for the first unknown long option (--dmi) close to a known one; "" when none is.
std::string suggest_option(const CLI::App& app, const std::vector<std::string>& unknown);

// "batch=8" -> {"batch", 8}. Throws Error(kExitUsage) for anything but NAME=POSITIVE_INTEGER.
std::pair<std::string, int64_t> parse_dim_assignment(const std::string& text);
// "input=1x3x224x224" -> {"input", {1,3,224,224}}. Throws Error(kExitUsage) for bad syntax or a dim <= 0.
std::pair<std::string, Shape> parse_input_assignment(const std::string& text);
// "a,b,,c" split at `separator` -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split_at(const std::string& text, char separator);
// Accepts a finite number in [low, high]: nan, inf and out-of-range values are refused at parse,
// naming the range, so no later arithmetic sees them.
CLI::Validator number_in_range(double low, double high);
// "2.5,4" -> {2.5, 4}: positive numbers separated by commas, for `option`.
std::vector<double> parse_positive_list(const std::string& option, const std::string& text);
// "1,8,32" -> {1, 8, 32}. Throws Error(kExitUsage) for anything but positive integers.
std::vector<int64_t> parse_batch_list(const std::string& text);
// All --dim and --input values; a name given twice with different values is a usage error.
ShapeOptions shape_options_from(const CliOptions& options);

}  // namespace modelcost
