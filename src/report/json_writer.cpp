#include "report/json_writer.h"

#include "report/aggregate.h"
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

Json nodes_json(const Report& report) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if ((c.sinks & kSinkJson) && (c.json || c.value)) columns.push_back(&c);
  Json nodes = Json::array();
  const auto& analysed = report.analysis->nodes;
  for (size_t row = 0; row < analysed.size(); ++row) {
    Json node = Json::object();
    for (const auto* c : columns)
      node[c->name] = c->json ? c->json(analysed[row], row) : cell_json(c->value(analysed[row], row));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Json by_op_type_json(const Report& report) {
  const OpTypeSummary summary = summarize_by_op_type(report);
  Json rows = Json::array();
  for (const auto& row : summary.rows) {
    Json entry = {{"op_type", row.op_type}, {"domain", row.domain}, {"count", row.count}};
    for (size_t c = 0; c < summary.columns.size(); ++c)
      if (summary.columns[c]->sinks & kSinkJson) entry[summary.columns[c]->name] = json_number(row.sums[c]);
    entry[summary.share_name] = json_number(row.share);
    rows.push_back(std::move(entry));
  }
  return rows;
}

}  // namespace

Json report_json(const Report& report) {
  Json root = Json::object();
  root["modelcost_version"] = report.tool_version;
  root["model"] = model_json(report);
  root["totals"] = totals_json(report);
  root["nodes"] = nodes_json(report);
  root["by_op_type"] = by_op_type_json(report);
  root["warnings"] = report.analysis->warnings;
  for (const auto& section : report.sections)
    if (section.json) root[section.name] = section.json();
  return root;
}

namespace {

std::string dump(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Indented like dump(2), but an array of objects (nodes, by_op_type, plan) puts one compact
// object per line: a 20,000-node report stays readable and line-oriented tools can grep it.
void write_member(const std::string& key, const Json& value, bool last, std::ostream& out) {
  out << "  " << dump(Json(key), -1) << ": ";
  if (value.is_array() && !value.empty() && value.front().is_object()) {
    out << "[\n";
    for (size_t i = 0; i < value.size(); ++i) out << "    " << dump(value[i], -1) << (i + 1 < value.size() ? ",\n" : "\n");
    out << "  ]";
  } else {
    std::string text = dump(value, 2);
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) text.insert(at + 1, "  ");
    out << text;
  }
  out << (last ? "\n" : ",\n");
}

}  // namespace

void write_json(const Report& report, std::ostream& out) {
  const Json root = report_json(report);
  out << "{\n";
  size_t index = 0;
  for (const auto& item : root.items()) write_member(item.key(), item.value(), ++index == root.size(), out);
  out << "}\n";
}

}  // namespace modelcost
