#include "roofline/dtype_names.h"

#include <cctype>
#include <map>

namespace modelcost {

std::string canonical_dtype_name(const std::string& text) {
  static const std::map<std::string, std::string> aliases = {
      {"float16", "fp16"}, {"half", "fp16"},     {"f16", "fp16"},      {"bfloat16", "bf16"},  {"float32", "fp32"},
      {"float", "fp32"},   {"single", "fp32"},   {"f32", "fp32"},      {"tensorfloat32", "tf32"}, {"float8", "fp8"},
      {"e4m3", "fp8"},     {"e5m2", "fp8"},      {"float8_e4m3fn", "fp8"}, {"float8_e5m2", "fp8"}, {"i8", "int8"},
      {"uint4", "int4"}};
  std::string lower;
  for (char ch : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto it = aliases.find(lower);
  return it == aliases.end() ? lower : it->second;
}

double dtype_name_bytes(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  return 1;  // fp8, int8
}

}  // namespace modelcost
