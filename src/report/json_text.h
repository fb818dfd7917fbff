// Appends JSON text to a string without building a JSON tree: the per-node part of a report is
// written this way (a tree of 20,000 objects costs more than the analysis). Every value comes
// out byte for byte as nlohmann's compact dump() writes it, so both paths can mix in one file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "report/report.h"

namespace modelcost {

class JsonText {
 public:
  explicit JsonText(std::string& out) : out_(out) {}

  void raw(std::string_view text) { out_.append(text); }
  // A quoted, escaped string; text that is not valid UTF-8 is replaced as in dump().
  void string(std::string_view text);
  // json_number()'s rule: an integer below 2^53, else the shortest round-trip double, null when not finite.
  void number(double value);
  void integer(int64_t value);
  void flag(bool value) { out_.append(value ? "true" : "false"); }
  void null() { out_.append("null"); }
  void cell(const CellValue& cell);
  // Any tree value, compact (dump(-1)).
  void value(const Json& value);

 private:
  std::string& out_;
};

// `value` as dump(-1) would write it, invalid UTF-8 replaced.
std::string compact_json(const Json& value);

}  // namespace modelcost
