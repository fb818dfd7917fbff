// The default columns and totals of every report. Adding a figure to all formats is one entry here
// (or one add_column_after call from a later stage).
#include <algorithm>

#include "modelcost/graph.h"
#include "report/json_text.h"
#include "report/model_info.h"
#include "report/number_format.h"
#include "report/report.h"

namespace modelcost {
namespace {

const TensorInfo* output_tensor(const NodeAnalysis& n, int id) {
  return id >= 0 ? &n.graph->tensors[id] : nullptr;
}

// Shapes of a node's outputs: "1x64x112x112;1x64"; "?" for an output without a shape.
std::string output_shapes_text(const NodeAnalysis& n) {
  std::string text;
  bool first = true;
  for (int id : n.node->outputs) {
    const TensorInfo* t = output_tensor(n, id);
    if (!t) continue;
    text += (first ? "" : ";") + (t->has_shape ? shape_dims_text(t->shape) : std::string("?"));
    first = false;
  }
  return text;
}

}  // namespace

std::string recast_dtype_name(int32_t dtype, const std::string& recast) {
  constexpr int32_t kComplex64 = 14, kComplex128 = 15;
  if (recast.empty() || !dtype_is_float(dtype) || dtype == kComplex64 || dtype == kComplex128) return dtype_name(dtype);
  if (recast == "fp16") return "float16";
  if (recast == "bf16") return "bfloat16";
  if (recast == "fp8") return "float8e4m3fn";
  if (recast == "int8") return "int8";
  return "float32";  // fp32, tf32 (tf32 lives in fp32 storage)
}

std::string output_dtypes_text(const NodeAnalysis& n, const std::string& recast) {
  std::string text;
  bool first = true;
  for (int id : n.node->outputs) {
    const TensorInfo* t = output_tensor(n, id);
    if (!t) continue;
    text += (first ? "" : ";") + std::string(t->dtype ? recast_dtype_name(t->dtype, recast) : "?");
    first = false;
  }
  return text;
}

// [{"name": ..., "dtype": ..., "shape": [...]}, ...], null for an unknown dtype or shape; float
// dtypes shown at the --dtype recast (`recast`, "" for none).
void write_outputs_json(const NodeAnalysis& n, const std::string& recast, JsonText& json) {
  json.raw("[");
  bool first = true;
  for (int id : n.node->outputs) {
    const TensorInfo* t = output_tensor(n, id);
    if (!t) continue;
    json.raw(first ? "{\"name\":" : ",{\"name\":");
    first = false;
    json.string(t->name);
    json.raw(",\"dtype\":");
    if (t->dtype) json.string(recast_dtype_name(t->dtype, recast));
    else json.null();
    json.raw(",\"shape\":");
    if (!t->has_shape) {
      json.null();
    } else {
      json.raw("[");
      for (size_t d = 0; d < t->shape.size(); ++d) {
        if (d) json.raw(",");
        json.integer(t->shape[d]);
      }
      json.raw("]");
    }
    json.raw("}");
  }
  json.raw("]");
}

namespace {

std::string qualified_op(const Node& node) {
  return node.domain.empty() || node.domain == "ai.onnx" ? node.op_type : node.domain + "." + node.op_type;
}

// Why a node's figures are incomplete, for the terminal.
std::string node_note(const NodeAnalysis& n) {
  if (!n.shaped) return "unshaped";
  if (!n.cost.known) return "no cost rule";
  if (n.cost.estimate) return "estimate";
  return "";
}

ReportColumn text_column(std::string name, std::string title, unsigned sinks, NodeCellFn value) {
  ReportColumn c;
  c.name = std::move(name);
  c.title = std::move(title);
  c.unit = "text";
  c.kind = ColumnKind::kText;
  c.sinks = sinks;
  c.value = std::move(value);
  return c;
}

ReportColumn number_column(std::string name, std::string title, std::string unit, ColumnKind kind, unsigned sinks,
                           bool additive, std::function<double(const NodeCost&)> value) {
  ReportColumn c;
  c.name = std::move(name);
  c.title = std::move(title);
  c.unit = std::move(unit);
  c.kind = kind;
  c.sinks = sinks;
  c.additive = additive;
  c.value = [value](const NodeAnalysis& n, size_t) { return CellValue::of_number(value(n.cost)); };
  return c;
}

ReportColumn flag_column(std::string name, unsigned sinks, std::function<bool(const NodeAnalysis&)> value) {
  ReportColumn c;
  c.name = std::move(name);
  c.title = c.name;
  c.unit = "bool";
  c.kind = ColumnKind::kFlag;
  c.sinks = sinks;
  c.value = [value](const NodeAnalysis& n, size_t) { return CellValue::of_flag(value(n)); };
  return c;
}

std::vector<ReportColumn> default_columns() {
  std::vector<ReportColumn> columns;
  columns.push_back(text_column("name", "node", kSinkAll, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(n.node->name);
  }));
  columns.push_back(text_column("op_type", "op_type", kSinkFiles, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(n.node->op_type);
  }));
  columns.push_back(text_column("op", "op", kSinkTable, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(qualified_op(*n.node));
  }));
  columns.push_back(text_column("domain", "domain", kSinkFiles, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(n.node->domain);
  }));
  columns.push_back(number_column("macs", "MACs", "multiply-accumulates", ColumnKind::kCount, kSinkAll, true,
                                  [](const NodeCost& c) { return c.macs; }));
  columns.push_back(number_column("flops", "FLOPs", "floating-point operations", ColumnKind::kCount, kSinkAll, true,
                                  [](const NodeCost& c) { return c.flops; }));
  columns.push_back(number_column("params", "params", "elements", ColumnKind::kCount, kSinkAll, true,
                                  [](const NodeCost& c) { return c.params; }));
  columns.push_back(number_column("bytes_read", "read", "bytes", ColumnKind::kBytes, kSinkFiles, true,
                                  [](const NodeCost& c) { return c.bytes_read; }));
  columns.push_back(number_column("bytes_written", "written", "bytes", ColumnKind::kBytes, kSinkFiles, true,
                                  [](const NodeCost& c) { return c.bytes_written; }));
  columns.push_back(number_column("bytes", "bytes", "bytes", ColumnKind::kBytes, kSinkTable, true,
                                  [](const NodeCost& c) { return c.bytes(); }));
  columns.push_back(number_column("arithmetic_intensity", "FLOP/B", "FLOP/byte", ColumnKind::kRatio, kSinkAll, false,
                                  [](const NodeCost& c) { return c.arithmetic_intensity(); }));
  ReportColumn outputs;
  outputs.name = "outputs";
  outputs.title = "outputs";
  outputs.unit = "[{name, dtype, shape}]";
  outputs.kind = ColumnKind::kText;
  outputs.sinks = kSinkJson;
  outputs.json_text = [](const NodeAnalysis& n, size_t, JsonText& json) { write_outputs_json(n, "", json); };
  columns.push_back(std::move(outputs));
  columns.push_back(text_column("output_shapes", "output shape", kSinkCsv | kSinkTable, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(output_shapes_text(n));
  }));
  columns.push_back(text_column("output_dtypes", "dtype", kSinkCsv, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(output_dtypes_text(n, ""));
  }));
  columns.push_back(flag_column("estimate", kSinkFiles, [](const NodeAnalysis& n) { return n.cost.estimate; }));
  columns.push_back(flag_column("known", kSinkFiles, [](const NodeAnalysis& n) { return n.cost.known; }));
  columns.push_back(text_column("note", "note", kSinkTable, [](const NodeAnalysis& n, size_t) {
    return CellValue::of_text(node_note(n));
  }));
  return columns;
}

ReportTotal total(std::string name, std::string title, std::string unit, ColumnKind kind,
                  std::function<double(const Analysis&)> value) {
  ReportTotal t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.unit = std::move(unit);
  t.kind = kind;
  t.value = [value](const Analysis& a) { return CellValue::of_number(value(a)); };
  return t;
}

std::vector<ReportTotal> default_totals() {
  std::vector<ReportTotal> totals;
  totals.push_back(total("macs", "MACs", "multiply-accumulates", ColumnKind::kCount,
                         [](const Analysis& a) { return a.totals.macs; }));
  totals.push_back(total("flops", "FLOPs", "floating-point operations", ColumnKind::kCount,
                         [](const Analysis& a) { return a.totals.flops; }));
  totals.push_back(total("params", "params", "elements", ColumnKind::kCount,
                         [](const Analysis& a) { return a.totals.params; }));
  totals.push_back(total("bytes_read", "bytes read", "bytes", ColumnKind::kBytes,
                         [](const Analysis& a) { return a.totals.bytes_read; }));
  totals.push_back(total("bytes_written", "bytes written", "bytes", ColumnKind::kBytes,
                         [](const Analysis& a) { return a.totals.bytes_written; }));
  totals.push_back(total("arithmetic_intensity", "intensity (FLOP/B)", "FLOP/byte", ColumnKind::kRatio,
                         [](const Analysis& a) {
                           const double bytes = a.totals.bytes_read + a.totals.bytes_written;
                           return bytes > 0 ? a.totals.flops / bytes : 0.0;
                         }));
  totals.push_back(total("nodes", "nodes", "nodes", ColumnKind::kInteger,
                         [](const Analysis& a) { return static_cast<double>(a.totals.nodes); }));
  totals.push_back(total("unshaped_nodes", "unshaped nodes", "nodes", ColumnKind::kInteger,
                         [](const Analysis& a) { return static_cast<double>(a.totals.unshaped_nodes); }));
  totals.push_back(total("uncosted_nodes", "uncosted nodes", "nodes", ColumnKind::kInteger,
                         [](const Analysis& a) { return static_cast<double>(a.totals.uncosted_nodes); }));
  totals.push_back(total("estimated_nodes", "estimated nodes", "nodes", ColumnKind::kInteger,
                         [](const Analysis& a) { return static_cast<double>(a.totals.estimated_nodes); }));
  return totals;
}

}  // namespace

const ReportColumn* Report::find_column(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

void Report::add_column_after(const std::string& after, ReportColumn column) {
  auto it = std::find_if(columns.begin(), columns.end(), [&](const ReportColumn& c) { return c.name == after; });
  columns.insert(it == columns.end() ? it : it + 1, std::move(column));
}

Report build_report(const Analysis& analysis, const std::string& tool_version) {
  Report report;
  report.analysis = std::make_shared<const Analysis>(analysis);
  report.tool_version = tool_version;
  report.columns = default_columns();
  report.totals = default_totals();
  return report;
}

}  // namespace modelcost
