#include "report/json_writer.h"

#include "report/aggregate.h"
#include "report/json_text.h"
#include "report/model_info.h"
#include "report/number_format.h"

namespace modelcost {
namespace {

Json model_json(const Report& report) {
  const Model& model = report.model();
  Json opsets = Json::object();
  for (const auto& [domain, version] : sorted_opsets(model)) opsets[domain] = version;
  Json inputs = Json::array();
  for (const auto& input : summarize_inputs(*report.analysis)) {
    Json declared = Json::array();
    for (const auto& d : input.declared) {
      if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) declared.push_back(std::stoll(d));
      else if (d == "?") declared.push_back(nullptr);
      else declared.push_back(d);
    }
    Json shape = nullptr;
    if (input.has_shape) {
      shape = Json::array();
      for (int64_t d : input.shape) shape.push_back(d);
    }
    inputs.push_back({{"name", input.name},
                      {"dtype", input.dtype.empty() ? Json(nullptr) : Json(input.dtype)},
                      {"shape", shape},
                      {"declared_shape", declared}});
  }
  return {{"path", model.path},       {"producer", model.producer}, {"ir_version", model.ir_version},
          {"graph", model.graph.name}, {"opsets", opsets},          {"inputs", inputs}};
}

Json totals_json(const Report& report) {
  Json totals = Json::object();
  for (const auto& t : report.totals)
    if ((t.sinks & kSinkJson) && t.value) totals[t.name] = cell_json(t.value(*report.analysis));
  return totals;
}

std::vector<const ReportColumn*> json_columns(const Report& report) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if ((c.sinks & kSinkJson) && (c.json_text || c.json || c.value)) columns.push_back(&c);
  return columns;
}

// One node as a compact object, keys in column order.
void write_node(const std::vector<const ReportColumn*>& columns, const NodeAnalysis& node, size_t row, std::string& out) {
  JsonText json(out);
  out += '{';
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    json.string(columns[c]->name);
    out += ':';
    if (columns[c]->json_text) columns[c]->json_text(node, row, json);
    else if (columns[c]->json) json.value(columns[c]->json(node, row));
    else json.cell(columns[c]->value(node, row));
  }
  out += '}';
}

// The nodes array as compact JSON text.
std::string nodes_text(const Report& report) {
  const std::vector<const ReportColumn*> columns = json_columns(report);
  std::string out = "[";
  const auto& analysed = report.analysis->nodes;
  for (size_t row = 0; row < analysed.size(); ++row) {
    if (row) out += ',';
    write_node(columns, analysed[row], row, out);
  }
  return out + "]";
}

Json by_op_type_json(const Report& report) {
  const OpTypeSummary summary = summarize_by_op_type(report);
  Json rows = Json::array();
  for (const auto& row : summary.rows)
    rows.push_back(summed_json(summary, row, {{"op_type", row.op_type}, {"domain", row.domain}}));
  return rows;
}

}  // namespace

Json report_json(const Report& report) {
  Json root = Json::object();
  root["modelcost_version"] = report.tool_version;
  root["model"] = model_json(report);
  root["totals"] = totals_json(report);
  root["nodes"] = Json::parse(nodes_text(report));
  root["by_op_type"] = by_op_type_json(report);
  root["warnings"] = report.analysis->warnings;
  for (const auto& section : report.sections)
    if (section.json) root[section.name] = section.json();
  return root;
}

namespace {

// Indented like dump(2), but an array of objects (nodes, by_op_type, plan) puts one compact
// object per line: a 20,000-node report stays readable and line-oriented tools can grep it.
void write_member(const std::string& key, const Json& value, bool last, std::string& out) {
  JsonText json(out);
  out += "  ";
  json.string(key);
  out += ": ";
  if (value.is_array() && !value.empty() && value.front().is_object()) {
    out += "[\n";
    for (size_t i = 0; i < value.size(); ++i) {
      out += "    ";
      json.value(value[i]);
      out += i + 1 < value.size() ? ",\n" : "\n";
    }
    out += "  ]";
  } else {
    std::string text = value.dump(2, ' ', false, Json::error_handler_t::replace);
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) text.insert(at + 1, "  ");
    out += text;
  }
  out += last ? "\n" : ",\n";
}

// The nodes member written straight from the columns, in the layout write_member gives arrays
// of objects.
void write_nodes_member(const Report& report, bool last, std::string& out) {
  const std::vector<const ReportColumn*> columns = json_columns(report);
  const auto& analysed = report.analysis->nodes;
  if (analysed.empty() || columns.empty()) return write_member("nodes", Json::parse(nodes_text(report)), last, out);
  out += "  \"nodes\": [\n";
  for (size_t row = 0; row < analysed.size(); ++row) {
    out += "    ";
    write_node(columns, analysed[row], row, out);
    out += row + 1 < analysed.size() ? ",\n" : "\n";
  }
  out += last ? "  ]\n" : "  ],\n";
}

}  // namespace

std::string json_report_text(const Report& report) {
  std::vector<std::pair<std::string, Json>> members = {{"modelcost_version", report.tool_version},
                                                       {"model", model_json(report)},
                                                       {"totals", totals_json(report)},
                                                       {"nodes", nullptr},
                                                       {"by_op_type", by_op_type_json(report)},
                                                       {"warnings", report.analysis->warnings}};
  for (const auto& section : report.sections)
    if (section.json) members.emplace_back(section.name, section.json());
  std::string out = "{\n";
  out.reserve(report.analysis->nodes.size() * 320 + 4096);
  for (size_t i = 0; i < members.size(); ++i) {
    const bool last = i + 1 == members.size();
    if (members[i].first == "nodes" && i == 3) write_nodes_member(report, last, out);
    else write_member(members[i].first, members[i].second, last, out);
  }
  out += "}\n";
  return out;
}

void write_json(const Report& report, std::ostream& out) {
  const std::string text = json_report_text(report);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace modelcost
