#include "report/html_writer.h"

#include <sstream>

#include "report/aggregate.h"
#include "report/html_nodes.h"
#include "report/html_sections.h"
#include "report/model_info.h"
#include "report/number_format.h"

namespace modelcost {
namespace {

const char* kStyle = R"(body{font:14px/1.4 system-ui,-apple-system,"DejaVu Sans",Arial,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0}td.t,th.t{text-align:left}
#nodes td.t:nth-child(2){white-space:normal;word-break:break-all;min-width:14em;max-width:26em}
table.kv td{text-align:left}table.kv td:first-child{color:#555}.scroll td.t{white-space:normal;max-width:34em}h3{font-size:14px;margin:16px 0 6px}button{font-size:12px;margin-right:4px}table.sortable th{cursor:pointer;user-select:none}
table.sortable th.asc::after{content:" \25B2"}table.sortable th.desc::after{content:" \25BC"}
.meta{color:#555}pre{background:#f8f8f8;padding:8px;overflow-x:auto;font-size:12px}.scroll{max-height:70vh;overflow:auto}
input{margin:4px 0 8px;padding:3px 6px;width:320px})";

// A cell: the terminal's human text, the exact number in data-v (for sorting) and the tooltip.
std::string cell_html(const CellValue& cell, ColumnKind kind) {
  const std::string text = html_escape(terminal_text(cell, kind));
  if (cell.type != CellValue::Type::kNumber) return "<td class=\"t\">" + text + "</td>";
  const std::string exact = exact_number(cell.number);
  return "<td data-v=\"" + (exact.empty() ? std::string("0") : exact) + "\" title=\"" + exact + "\">" + text + "</td>";
}

void write_header(const Report& report, std::ostream& out) {
  const Model& model = report.model();
  out << "<h1>modelcost " << html_escape(report.tool_version) << ": " << html_escape(model.path) << "</h1>\n<div class=\"meta\">producer "
      << html_escape(model.producer.empty() ? "(none)" : model.producer) << ", IR version " << model.ir_version << "; opsets ";
  bool first = true;
  for (const auto& [domain, version] : sorted_opsets(model)) out << (first ? "" : ", ") << html_escape(domain) << " " << version, first = false;
  out << "</div>\n<h2>Inputs</h2>\n<table><thead><tr><th class=\"t\">input</th><th class=\"t\">dtype</th><th class=\"t\">declared</th>"
         "<th class=\"t\">analysed as</th></tr></thead><tbody>\n";
  for (const auto& input : summarize_inputs(*report.analysis)) {
    std::string declared;
    for (size_t i = 0; i < input.declared.size(); ++i) declared += (i ? "," : "") + input.declared[i];
    out << "<tr><td class=\"t\">" << html_escape(input.name) << "</td><td class=\"t\">" << html_escape(input.dtype.empty() ? "?" : input.dtype)
        << "</td><td class=\"t\">[" << html_escape(declared) << "]</td><td class=\"t\">"
        << html_escape(input.has_shape ? shape_dims_text(input.shape) : "?") << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_totals(const Report& report, std::ostream& out) {
  out << "<h2>Totals</h2>\n<table id=\"totals\"><tbody>\n";
  for (const auto& t : report.totals) {
    if (!t.value) continue;
    out << "<tr><td class=\"t\">" << html_escape(t.title) << "</td>" << cell_html(t.value(*report.analysis), t.kind) << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_op_types(const Report& report, std::ostream& out) {
  const OpTypeSummary summary = summarize_by_op_type(report);
  out << "<h2>By op type (" << summary.rows.size() << ")</h2>\n<table id=\"op-types\" class=\"sortable\"><thead><tr>"
      << "<th class=\"t\">op</th><th>count</th>";
  for (const auto* c : summary.columns) out << "<th>" << html_escape(c->name) << "</th>";
  out << "<th>" << html_escape(summary.share_name) << "</th></tr></thead><tbody>\n";
  for (const auto& row : summary.rows) {
    out << "<tr><td class=\"t\">" << html_escape(row.domain.empty() ? row.op_type : row.domain + "." + row.op_type) << "</td>"
        << cell_html(CellValue::of_number(double(row.count)), ColumnKind::kInteger);
    for (size_t c = 0; c < summary.columns.size(); ++c) out << cell_html(CellValue::of_number(row.sums[c]), summary.columns[c]->kind);
    out << cell_html(CellValue::of_number(row.share), ColumnKind::kShare) << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

}  // namespace

void write_html(const Report& report, const HtmlOptions& options, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>modelcost: " << html_escape(report.model().path)
      << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n";
  write_header(report, out);
  write_totals(report, out);
  write_html_sections(report, out);
  if (!options.roofline_svg.empty()) {
    std::string svg = options.roofline_svg;
    svg.erase(0, svg.find("<svg"));  // inline SVG takes no XML declaration
    out << "<h2>Roofline</h2>\n" << svg;
  }
  write_html_nodes(report, out);
  write_op_types(report, out);
  const auto& warnings = report.analysis->warnings;
  if (!warnings.empty()) {
    out << "<h2>Warnings (" << warnings.size() << ")</h2>\n<ul>\n";
    for (const auto& w : warnings) out << "<li>" << html_escape(w) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<script>" << html_nodes_script() << "</script>\n</body></html>\n";
}

}  // namespace modelcost
