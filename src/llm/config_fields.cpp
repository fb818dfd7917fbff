#include "llm/config_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

// Larger than any published model's dimension, small enough that products of a few stay exact in a double.
constexpr int64_t kLargestDimension = int64_t{1} << 30;

// A value as an error message shows it: containers by kind (dumping a hostile one could be huge).
std::string shown(const nlohmann::json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  const std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 60) + "..." : text;
}

[[noreturn]] void bad_field(const char* name, const std::string& why) {
  throw Error(kExitInvalidModel, fmt::format("config.json field '{}': {}", name, why));
}

int64_t whole_number(const nlohmann::json& value, const char* name, int64_t minimum) {
  auto out_of_range = [&] { bad_field(name, fmt::format("{} is out of range ({} to {})", shown(value), minimum, kLargestDimension)); };
  if (value.is_number_float()) {  // 4096.0: a whole number written as a float; checked before any conversion
    const double d = value.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) bad_field(name, fmt::format("expected a whole number, got {}", shown(value)));
    if (d < static_cast<double>(minimum) || d > static_cast<double>(kLargestDimension)) out_of_range();
    return static_cast<int64_t>(d);
  }
  if (!value.is_number_integer()) bad_field(name, fmt::format("expected a whole number, got {}", shown(value)));
  if (value.is_number_unsigned() ? value.get<uint64_t>() > static_cast<uint64_t>(kLargestDimension)
                                 : value.get<int64_t>() < minimum || value.get<int64_t>() > kLargestDimension)
    out_of_range();
  return value.get<int64_t>();
}

}  // namespace

bool ConfigFields::has(const char* name) const {
  auto it = object_.find(name);
  return it != object_.end() && !it->is_null();
}

int64_t ConfigFields::count(const char* name, const char* what) const {
  if (!has(name)) throw Error(kExitInvalidModel, fmt::format("config.json: missing field '{}' ({})", name, what));
  return whole_number(object_.at(name), name, 1);
}

int64_t ConfigFields::count_either(const char* name, const char* alias, const char* what) const {
  return has(name) || !has(alias) ? count(name, what) : count(alias, what);
}

int64_t ConfigFields::count_or(const char* name, int64_t fallback) const {
  return has(name) ? whole_number(object_.at(name), name, 0) : fallback;
}

bool ConfigFields::flag_or(const char* name, bool fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& value = object_.at(name);
  if (!value.is_boolean()) bad_field(name, fmt::format("expected true or false, got {}", shown(value)));
  return value.get<bool>();
}

std::string ConfigFields::text_or(const char* name, const std::string& fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& value = object_.at(name);
  if (!value.is_string()) bad_field(name, fmt::format("expected a string, got {}", shown(value)));
  return value.get<std::string>();
}

}  // namespace modelcost
