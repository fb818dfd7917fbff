#include "llm/config_fields.h"

#include <fmt/format.h>

#include <algorithm>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

// Larger than any published model's dimension, small enough that products of a few stay exact in a double.
constexpr int64_t kLargestDimension = int64_t{1} << 30;

[[noreturn]] void bad_field(const char* name, const std::string& why) {
  throw Error(kExitInvalidModel, fmt::format("config.json field '{}': {}", name, why));
}

int64_t whole_number(const nlohmann::json& value, const char* name, int64_t minimum) {
  if (!value.is_number_integer() && !(value.is_number_float() && value.get<double>() == static_cast<int64_t>(value.get<double>())))
    bad_field(name, fmt::format("expected a whole number, got {}", value.dump()));
  const int64_t n = value.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(value.get<uint64_t>(), kLargestDimension + 1))
                                               : value.get<int64_t>();
  if (n < minimum || n > kLargestDimension)
    bad_field(name, fmt::format("{} is out of range ({} to {})", value.dump(), minimum, kLargestDimension));
  return n;
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
  if (!value.is_boolean()) bad_field(name, fmt::format("expected true or false, got {}", value.dump()));
  return value.get<bool>();
}

std::string ConfigFields::text_or(const char* name, const std::string& fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& value = object_.at(name);
  if (!value.is_string()) bad_field(name, fmt::format("expected a string, got {}", value.dump()));
  return value.get<std::string>();
}

}  // namespace modelcost
