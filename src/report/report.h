// The report model every printer reads: what to print (columns, totals, extra sections) kept
// apart from how each format prints it. A later stage adds a per-node figure by appending one
// ReportColumn, a total by appending one ReportTotal, and a JSON section (hardware, plan) by
// appending one ReportSection; the terminal, CSV and JSON printers pick them up unchanged.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "modelcost/analysis.h"

namespace modelcost {

// JSON with keys in the order they were added, so reports read in a stable, documented order.
using Json = nlohmann::ordered_json;

// One cell: a number, a piece of text, a flag, or nothing (a figure that does not apply).
struct CellValue {
  enum class Type { kEmpty, kNumber, kText, kFlag };
  Type type = Type::kEmpty;
  double number = 0;
  std::string text;
  bool flag = false;

  static CellValue empty() { return {}; }
  static CellValue of_number(double v) {
    CellValue c;
    c.type = Type::kNumber;
    c.number = v;
    return c;
  }
  static CellValue of_text(std::string v) {
    CellValue c;
    c.type = Type::kText;
    c.text = std::move(v);
    return c;
  }
  static CellValue of_flag(bool v) {
    CellValue c;
    c.type = Type::kFlag;
    c.flag = v;
    return c;
  }
};

// How a value is shown in the terminal (CSV and JSON always carry the exact number).
enum class ColumnKind {
  kCount,     // operations, elements: "4.09 G"
  kInteger,   // small exact counts (nodes): "169"
  kBytes,     // "97.5 MB" (decimal units)
  kRatio,     // flop/byte and similar: 3 significant digits
  kTime,      // a duration in the column's unit: 3 significant digits
  kShare,     // a fraction of a total, 0..1: "12.3%"
  kText,
  kFlag,      // true/false
};

// Where a column or total appears.
enum ReportSink : unsigned {
  kSinkTable = 1u << 0,  // terminal table of the heaviest nodes (or terminal totals)
  kSinkCsv = 1u << 1,
  kSinkJson = 1u << 2,
  kSinkAll = kSinkTable | kSinkCsv | kSinkJson,
  kSinkFiles = kSinkCsv | kSinkJson,
};

class JsonText;
using NodeCellFn = std::function<CellValue(const NodeAnalysis& node, size_t row)>;
using NodeJsonFn = std::function<Json(const NodeAnalysis& node, size_t row)>;
using NodeJsonTextFn = std::function<void(const NodeAnalysis& node, size_t row, JsonText& out)>;

// A per-node figure. `row` is the node's index in Analysis::nodes, so a later stage can keep its
// own per-node results in a vector and look them up.
struct ReportColumn {
  std::string name;   // CSV header and JSON key
  std::string title;  // terminal header
  std::string unit;   // documented unit ("1" for plain counts, "bytes", "us", ...)
  ColumnKind kind = ColumnKind::kCount;
  unsigned sinks = kSinkAll;
  bool additive = false;  // summed per op type in the by-op summary
  NodeCellFn value;
  NodeJsonFn json;  // optional: a structured JSON value instead of `value` (e.g. outputs[])
  // optional: the structured value written as JSON text, without a tree (taken before `json`;
  // a column of every node's outputs built as trees would cost more than the rest of the report)
  NodeJsonTextFn json_text = nullptr;
};

using TotalCellFn = std::function<CellValue(const Analysis& analysis)>;

// A model-level figure, printed in the terminal totals and in JSON "totals".
struct ReportTotal {
  std::string name;
  std::string title;
  std::string unit;
  ColumnKind kind = ColumnKind::kCount;
  unsigned sinks = kSinkTable | kSinkJson;
  TotalCellFn value;
};

// A whole extra part of the report (the "hardware" and "plan" sections): a JSON value under `name`
// and, optionally, lines for the terminal printed after the totals.
struct ReportSection {
  std::string name;
  std::function<Json()> json;
  std::function<void(std::ostream&)> print;
};

// Holds values only: its own copy of the analysis (whose shaped graph it shares), and columns whose
// functions keep copies of what they print, so it outlives the stages that built it.
struct Report {
  std::shared_ptr<const Analysis> analysis;
  std::string tool_version;
  std::vector<ReportColumn> columns;
  std::vector<ReportTotal> totals;
  std::vector<ReportSection> sections;
  std::string rank_by = "flops";  // column whose value orders the heaviest nodes and op types

  const Model& model() const { return *analysis->model; }
  const ReportColumn* find_column(const std::string& name) const;
  // Inserts after the named column (at the end when it is absent).
  void add_column_after(const std::string& after, ReportColumn column);
};

// Output dtypes as the report shows them: after --dtype (`recast`, "" for none) every float
// tensor is shown at that type ("float16"); integer tensors keep theirs.
std::string recast_dtype_name(int32_t dtype, const std::string& recast);
std::string output_dtypes_text(const NodeAnalysis& node, const std::string& recast);
void write_outputs_json(const NodeAnalysis& node, const std::string& recast, JsonText& json);

// The default report: the per-node columns and totals that docs/reports.md lists.
Report build_report(const Analysis& analysis, const std::string& tool_version);

}  // namespace modelcost
