// Typed reads of a config.json's members, each failure one line naming the field.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace modelcost {

class ConfigFields {
 public:
  explicit ConfigFields(const nlohmann::json& object) : object_(object) {}
  // A member that is present and not null.
  bool has(const char* name) const;
  // A positive integer; throws Error(kExitInvalidModel) "missing field 'NAME' (what)" or naming a bad value.
  int64_t count(const char* name, const char* what) const;
  // The first of two spellings that is present (Falcon's n_head / num_attention_heads).
  int64_t count_either(const char* name, const char* alias, const char* what) const;
  // A whole number >= 0, `fallback` when absent or null.
  int64_t count_or(const char* name, int64_t fallback) const;
  bool flag_or(const char* name, bool fallback) const;
  std::string text_or(const char* name, const std::string& fallback) const;
  const nlohmann::json& member(const char* name) const { return object_.at(name); }

 private:
  const nlohmann::json& object_;
};

}  // namespace modelcost
