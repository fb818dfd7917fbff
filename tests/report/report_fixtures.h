// Shared by the report tests: a small model whose costs are set by hand (so the printers are
// tested on known numbers whatever the op rules do), and an RFC 4180 CSV reader.
#pragma once
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/csv_writer.h"
#include "report/json_writer.h"
#include "report/report.h"
#include "test_support.h"

namespace modelcost::testing {

// x[1,8] -> fc1 (MatMul, w1[8,16]) -> act (Relu) -> fc2 (MatMul, w2[16,4]); the last node's
// name has a comma and quotes to exercise CSV quoting.
inline const char* kLastNodeName = "fc2,\"last\"";

inline std::unique_ptr<AnalysisRun> hand_costed_run() {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{1, 8});
  b.weight("w1", kFloat, {8, 16});
  b.weight("w2", kFloat, {16, 4});
  b.node("MatMul", {"x", "w1"}, {"h"}).set_name("fc1");
  b.node("Relu", {"h"}, {"a"}).set_name("act");
  b.node("MatMul", {"a", "w2"}, {"y"}).set_name(kLastNodeName);
  b.value_info("h", kFloat, {1, 16});
  b.value_info("a", kFloat, {1, 16});
  b.value_info("y", kFloat, {1, 4});
  b.output("y");
  auto run = analyse(b);
  auto set = [&](size_t i, double macs, double flops, double params, double read, double written) {
    NodeAnalysis& n = run->analysis.nodes.at(i);
    n.shaped = true;
    n.cost = NodeCost{};
    n.cost.macs = macs;
    n.cost.flops = flops;
    n.cost.params = params;
    n.cost.bytes_read = read;
    n.cost.bytes_written = written;
    n.cost.known = true;
  };
  // Hand-computed: MatMul [1,8]x[8,16] = 128 MACs, 256 FLOPs; Relu on 16 elements = 16 FLOPs;
  // MatMul [1,16]x[16,4] = 64 MACs. Bytes: every input and output at 4 bytes per float.
  set(0, 128, 256, 128, (8 + 128) * 4, 16 * 4);
  set(1, 0, 16, 0, 16 * 4, 16 * 4);
  set(2, 64, 128, 64, (16 + 64) * 4, 4 * 4);
  Totals& t = run->analysis.totals;
  t = Totals{};
  t.macs = 192;
  t.flops = 400;
  t.params = 192;
  t.bytes_read = 544 + 64 + 320;
  t.bytes_written = 64 + 64 + 16;
  t.nodes = 3;
  run->analysis.warnings = {"a test warning"};
  return run;
}

// RFC 4180 reader: rows of fields; quoted fields may hold commas, quotes and line breaks.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (ch == '"') quoted = false;
      else field += ch;
    } else if (ch == '"') {
      quoted = true;
      field_started = true;
    } else if (ch == ',') {
      row.push_back(field), field.clear();
      field_started = false;
    } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      row.push_back(field), field.clear();
      rows.push_back(row), row.clear();
      field_started = false;
      ++i;
    } else {
      field += ch;
      field_started = true;
    }
  }
  if (field_started || !field.empty() || !row.empty()) row.push_back(field), rows.push_back(row);
  return rows;
}

inline std::string csv_text(const Report& report) {
  std::ostringstream out;
  write_csv(report, out);
  return out.str();
}

inline Json json_of(const Report& report) {
  std::ostringstream out;
  write_json(report, out);
  return Json::parse(out.str());
}

inline size_t column_index(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no CSV column " << name;
  return 0;
}

}  // namespace modelcost::testing
